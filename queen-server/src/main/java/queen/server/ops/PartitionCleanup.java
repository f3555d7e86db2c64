package queen.server.ops;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.UUID;
import java.util.function.BooleanSupplier;
import queen.server.store.RetentionStore;

/**
 * Removes inactive partitions, a step of the retention cycle (PARTITION_CLEANUP_DAYS, as in Queen):
 * a partition that retains no message and that nobody pushed to, popped or acked for that long goes
 * with its cursors. Without it a queue with a partition per order, user or job kept a partition row
 * and a cursor per group for every one it ever had, and each statistics refresh read them all.
 *
 * <p>Candidates are read a page at a time in id order; each is judged again and removed in its own
 * short transaction under its row lock, so a push that arrives meanwhile either lands first (and
 * the partition stays) or waits and creates it again under the same id. A partition with a live
 * lease or dead letters stays.
 */
final class PartitionCleanup {
  /** Candidates read per statement. */
  static final int PAGE = 1_000;

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
    UUID after = null;
    List<UUID> page;
    do {
      page = store.inactive(cutoff, after, PAGE);
      for (UUID partition : page) {
        if (stop.getAsBoolean()) {
          return n;
        }
        if (store.removeInactive(partition, cutoff)) {
          n++;
          removed.increment();
        }
        after = partition;
      }
    } while (page.size() == PAGE);
    return n;
  }
}
