package queen.client;

import java.util.concurrent.atomic.AtomicLong;

/**
 * A consumer's {@code limit}, shared by its workers: each claims the messages of the batch it asks
 * for before it pops, and gives back what it did not get or handle, so that together they never
 * handle more than the limit.
 */
final class Quota {
  private final long limit;
  private final int batch;
  private final AtomicLong reserved = new AtomicLong();

  /** {@code limit} 0: no limit. */
  Quota(long limit, int batch) {
    this.limit = limit;
    this.batch = batch;
  }

  /** Claims up to a batch of what is left of the limit; 0 when the limit is spent. */
  int reserve() {
    if (limit == 0) {
      return batch;
    }
    while (true) {
      long r = reserved.get();
      long n = Math.min(batch, limit - r);
      if (n <= 0) {
        return 0;
      }
      if (reserved.compareAndSet(r, r + n)) {
        return (int) n;
      }
    }
  }

  /** Gives back {@code n} claimed messages that were not handled. */
  void unreserve(int n) {
    if (limit != 0 && n > 0) {
      reserved.addAndGet(-n);
    }
  }
}
