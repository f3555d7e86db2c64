package queen.bench;

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

  @Option(names = "--minutes", defaultValue = "5")
  int minutes;

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

  @Option(names = "--sample-seconds", defaultValue = "30")
  int sampleSeconds;

  @Option(
      names = "--retention-interval-ms",
      defaultValue = "5000",
      description = "The broker's RETENTION_INTERVAL (default ${DEFAULT-VALUE}).")
  int retentionInterval;

  @Option(names = "--database", defaultValue = "queen_bench_churn")
  String database;

  @Option(names = "--port", defaultValue = "6699")
  int port;

  @Option(names = "--broker-main", defaultValue = "queen.cli.Main", hidden = true)
  String brokerMain;

  @Override
  public Integer call() throws Exception {
    long errors = 0;
    for (double days : new double[] {cleanupDays, 0}) {
      options.recreate(database);
      try (Jdbc db = options.jdbc();
          BrokerProcess broker =
              BrokerProcess.start(
                  brokerMain,
                  port,
                  database,
                  options.out.resolve("broker-churn.log"),
                  Map.of(
                      "RETENTION_INTERVAL",
                      Integer.toString(retentionInterval),
                      "PARTITION_CLEANUP_DAYS",
                      Double.toString(days)));
          BrokerTarget t = new BrokerTarget(broker.url)) {
        Result r =
            RetentionRun.phase(
                t,
                db,
                broker.pid(),
                minutes,
                retentionSeconds,
                sampleSeconds,
                new RetentionRun.Shape(
                    PARTITIONS,
                    pushesPerSecond / RetentionRun.PRODUCERS,
                    days > 0 ? "churn-cleanup-" + days + "d" : "churn-no-cleanup"));
        System.out.println(r.summary());
        Report.append(options.out, r);
        errors += r.errors();
      }
    }
    return errors > 0 ? 1 : 0;
  }
}
