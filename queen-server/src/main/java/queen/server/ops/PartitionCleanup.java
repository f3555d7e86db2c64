package queen.server.ops;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import java.time.Duration;
import java.time.Instant;
import java.util.function.BooleanSupplier;
import queen.server.store.RetentionStore;

/**
 * Removes inactive partitions, a step of the retention cycle (PARTITION_CLEANUP_DAYS, as in Queen):
 * a partition that retains no message and that nobody pushed to, popped or acked for that long goes
 * with its cursors. Without it a queue with a partition per order, user or job kept a partition row
 * and a cursor per group for every one it ever had, and each statistics refresh read them all.
 *
 * <p>A page of candidates at a time in id order, each page one short transaction in which every
 * candidate is judged again under its row lock: a push that arrives meanwhile either lands first
 * (and the partition stays) or waits and creates it again under the same id. A partition or cursor
 * in use right now, a live lease, dead letters or stream state keep it.
 */
final class PartitionCleanup {
  /** Candidates looked at per transaction: its locks are held until it commits. */
  static final int PAGE = 100;

  private final RetentionStore store;
  private final Duration idle;
  private final Counter removed;

  /** {@code idle}: how long a partition must be inactive to go; zero turns the step off. */
  PartitionCleanup(RetentionStore store, Duration idle, MeterRegistry meters) {
    this.store = store;
    this.idle = idle;
    this.removed =
        Counter.builder("queen_retention_removed_partitions")
            .description("Inactive partitions removed with their cursors (PARTITION_CLEANUP_DAYS)")
            .register(meters);
  }

  /** Removes the partitions inactive at {@code now}, until done or {@code stop}; how many. */
  long run(Instant now, BooleanSupplier stop) {
    if (idle.isZero()) {
      return 0;
    }
    Instant cutoff = now.minus(idle);
    long n = 0;
    RetentionStore.Removal page = new RetentionStore.Removal(PAGE, 0, null);
    while (page.examined() == PAGE && !stop.getAsBoolean()) {
      page = store.removeInactive(cutoff, page.lastId(), PAGE);
      n += page.removed();
      removed.increment(page.removed());
    }
    return n;
  }
}
