package queen.server.pop;

import java.util.Collection;
import java.util.HashMap;
import java.util.Map;
import java.util.Set;

/**
 * What was pushed to each ready partition of a ring since it became ready, as far as pushes tell,
 * and since when the ring has had work: the minimum pop wait holds a pop until a batch's worth has
 * arrived or the wait is over. Not thread-safe: its ring guards it.
 */
final class Arrivals {
  /** Messages and their payload bytes; a count of -1 when unknown (a reseed, an ack-promote). */
  private record Amount(long count, long bytes) {
    static final Amount UNKNOWN = new Amount(-1, 0);

    Amount plus(Amount more) {
      return count < 0 || more.count < 0
          ? UNKNOWN
          : new Amount(count + more.count, bytes + more.bytes);
    }
  }

  private final Map<String, Amount> byPartition = new HashMap<>();
  private long firstReadyNanos;

  /** The ring had nothing ready, and now has: the minimum pop wait counts from here. */
  void firstReady(long nowNanos) {
    firstReadyNanos = nowNanos;
  }

  /** A push stored {@code count} messages (-1: unknown) of {@code bytes} bytes in a partition. */
  void add(String partition, long count, long bytes) {
    byPartition.merge(partition, new Amount(count, bytes), Amount::plus);
  }

  /** The partition became ready for a reason that tells no amount. */
  void unknown(String partition) {
    byPartition.putIfAbsent(partition, Amount.UNKNOWN);
  }

  void remove(String partition) {
    byPartition.remove(partition);
  }

  Set<String> partitions() {
    return byPartition.keySet();
  }

  /**
   * The minimum pop wait: until when a pop for {@code batch} messages should hold back because the
   * ring's work ({@code ready}) is younger than {@code waitNanos} and, as far as pushes tell,
   * smaller than the batch and than the pop's byte budget {@code maxBytes} (a pop that would end at
   * the budget gains nothing by waiting for more). 0 means claim now.
   */
  long holdUntil(
      Collection<String> ready, long waitNanos, int batch, long maxBytes, long nowNanos) {
    if (ready.isEmpty()) {
      return 0;
    }
    long count = 0;
    long bytes = 0;
    for (String p : ready) {
      Amount a = byPartition.getOrDefault(p, Amount.UNKNOWN);
      if (a.count() < 0) {
        return 0; // unknown amount (reseed, ack-promote): do not hold
      }
      count += a.count();
      bytes += a.bytes();
    }
    long until = firstReadyNanos + waitNanos;
    return count >= batch || bytes >= maxBytes || nowNanos >= until ? 0 : until;
  }
}
