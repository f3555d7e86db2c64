package queen.bench;

import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/**
 * {@code queen bench partition-churn}: a partition per order. Every push goes to a partition never
 * seen before, on a queue whose retention empties them; once with the broker removing inactive
 * partitions (PARTITION_CLEANUP_DAYS) and once without, each against a broker of its own on a fresh
 * database: the partition and cursor rows, the schema's size and the throughput over time.
 */
@Command(
    name = "partition-churn",
    description =
        "Minutes of push and pop+ack with a new partition per push, on a queue with a short"
            + " retentionSeconds: partition and cursor rows and the schema's size over time, with"
            + " inactive partitions removed (PARTITION_CLEANUP_DAYS) and without.")
final class PartitionChurnCommand implements Callable<Integer> {
  /** Partition names to draw from: a push meets one already used about never. */
  static final int PARTITIONS = Integer.MAX_VALUE;

  @Mixin BenchOptions options;

  @Mixin OwnBrokerPhases phases;

  @Option(names = "--retention-seconds", defaultValue = "30")
  int retentionSeconds;

  @Option(
      names = "--cleanup-days",
      defaultValue = "0.0005",
      description =
          "The broker's PARTITION_CLEANUP_DAYS in the run that removes (default ${DEFAULT-VALUE},"
              + " 43 s).")
  double cleanupDays;

  @Option(
      names = "--pushes-per-second",
      defaultValue = "100",
      description =
          "Pushes a second of all producers together, each to a new partition (default"
              + " ${DEFAULT-VALUE}; 0: as fast as they go).")
  double pushesPerSecond;

  @Override
  public Integer call() throws Exception {
    double each = pushesPerSecond / RetentionRun.PRODUCERS;
    return phases.run(
        options,
        List.of(
            new OwnBrokerPhases.Phase(
                retentionSeconds,
                Map.of("PARTITION_CLEANUP_DAYS", Double.toString(cleanupDays)),
                new RetentionRun.Shape(PARTITIONS, each, "churn-cleanup-" + cleanupDays + "d")),
            new OwnBrokerPhases.Phase(
                retentionSeconds,
                Map.of("PARTITION_CLEANUP_DAYS", "0"),
                new RetentionRun.Shape(PARTITIONS, each, "churn-no-cleanup"))));
  }
}
