package queen.bench;

import java.util.HashMap;
import java.util.List;
import java.util.Map;
import picocli.CommandLine.Option;

/**
 * The options and the loop of the scenarios that run {@link RetentionRun} phases, each against a
 * broker of its own on a fresh database.
 */
final class OwnBrokerPhases {
  @Option(names = "--minutes", defaultValue = "10")
  int minutes;

  @Option(names = "--sample-seconds", defaultValue = "10")
  int sampleSeconds;

  @Option(
      names = "--retention-interval-ms",
      defaultValue = "5000",
      description = "The broker's RETENTION_INTERVAL (default ${DEFAULT-VALUE}).")
  int retentionInterval;

  @Option(names = "--database", defaultValue = "queen_bench_retention")
  String database;

  @Option(names = "--port", defaultValue = "6698")
  int port;

  @Option(names = "--broker-main", defaultValue = "queen.cli.Main", hidden = true)
  String brokerMain;

  /**
   * One phase: the queue's retentionSeconds (0: retention off), the broker's settings beside
   * RETENTION_INTERVAL, and the load.
   */
  record Phase(int retentionSeconds, Map<String, String> env, RetentionRun.Shape shape) {}

  /** Runs the phases in order; 1 when any had errors. */
  int run(BenchOptions options, List<Phase> phases) throws Exception {
    long errors = 0;
    for (Phase phase : phases) {
      options.recreate(database);
      Map<String, String> env = new HashMap<>(phase.env());
      env.put("RETENTION_INTERVAL", Integer.toString(retentionInterval));
      try (Jdbc db = options.jdbc();
          BrokerProcess broker =
              BrokerProcess.start(
                  brokerMain, port, database, options.out.resolve("broker-retention.log"), env);
          BrokerTarget t = new BrokerTarget(broker.url)) {
        Result r =
            RetentionRun.phase(
                t,
                db,
                broker.pid(),
                minutes,
                phase.retentionSeconds(),
                sampleSeconds,
                phase.shape());
        System.out.println(r.summary());
        Report.append(options.out, r);
        errors += r.errors();
      }
    }
    return errors > 0 ? 1 : 0;
  }
}
