package queen.bench;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/**
 * {@code queen bench}: load scenarios against a running broker, or against the database directly
 * with {@code --baseline naive|ceiling}, each printing one summary line per run and appending to
 * results.json. {@code suite} runs the standard matrix with its own broker and renders the report.
 */
@Command(
    name = "bench",
    mixinStandardHelpOptions = true,
    // every scenario answers --help too
    scope = CommandLine.ScopeType.INHERIT,
    description = "Measure throughput, latency and scale (see docs/benchmarks.md).",
    subcommands = {
      BenchCommand.Push.class,
      BenchCommand.PopAck.class,
      BenchCommand.Mixed.class,
      BenchCommand.FanOut.class,
      BenchCommand.Latency.class,
      BenchCommand.ParkedCmd.class,
      BenchCommand.ManyPartitions.class,
      BenchCommand.QueenPush.class,
      BenchCommand.QueenPop.class,
      BenchCommand.QueenMixed.class,
      BenchCommand.StorageCmd.class,
      BenchCommand.RetentionCmd.class,
      PartitionChurnCommand.class,
      AdminCommand.class,
      StartupCommand.class,
      KillRestartCommand.class,
      PgCrashCommand.class,
      CrossBrokerCommand.class,
      StreamsCommand.class,
      Suite.class,
      BenchCommand.Render.class,
      BenchCommand.Jmh.class
    })
public final class BenchCommand implements Runnable {
  @CommandLine.Spec CommandLine.Model.CommandSpec spec;

  @Override
  public void run() {
    throw new CommandLine.ParameterException(spec.commandLine(), "Missing scenario");
  }

  /** Runs a scenario body against the chosen target and records its results. */
  abstract static class Scenario implements Callable<Integer> {
    @Mixin BenchOptions options;

    abstract List<Result> run(Scenarios s, Target t) throws Exception;

    @Override
    public Integer call() throws Exception {
      try (Jdbc db = options.baseline == null ? null : options.jdbc();
          Target t = options.target(db)) {
        List<Result> results = run(new Scenarios(t, options.warmup, options.seconds), t);
        for (Result r : results) {
          System.out.println(r.summary());
          Report.append(options.out, r);
        }
        return results.stream().anyMatch(r -> r.errors() > 0) ? 1 : 0;
      }
    }
  }

  @Command(name = "push", description = "Producers pushing batches as fast as they can.")
  static final class Push extends Scenario {
    @Option(names = "--producers", defaultValue = "16")
    int producers;

    @Option(names = "--batch", defaultValue = "10")
    int batch;

    @Option(names = "--partitions", defaultValue = "100")
    int partitions;

    @Option(names = "--payload", defaultValue = "30", description = "Bytes per message.")
    int payload;

    @Override
    List<Result> run(Scenarios s, Target t) throws Exception {
      return List.of(s.push("push", producers, batch, partitions, payload));
    }
  }

  @Command(name = "pop-ack", description = "Consumers popping and acking a standing backlog.")
  static final class PopAck extends Scenario {
    @Option(names = "--consumers", defaultValue = "16")
    int consumers;

    @Option(names = "--batch", defaultValue = "10")
    int batch;

    @Option(names = "--partitions", defaultValue = "100")
    int partitions;

    @Option(names = "--backlog", defaultValue = "200000")
    int backlog;

    @Option(names = "--auto-ack", description = "Pop with autoAck instead of acking.")
    boolean autoAck;

    @Mixin FillOptions fill;

    @Option(
        names = "--db-stats",
        description =
            "Also report the updates (and the HOT share of them) and the size of the cursor and"
                + " partition tables, read from the database at --pg-url.")
    boolean dbStats;

    @Override
    List<Result> run(Scenarios all, Target t) throws Exception {
      Scenarios s = all.filling(fill.shape());
      if (!dbStats) {
        return List.of(s.popAck("pop-ack", consumers, batch, partitions, backlog, autoAck));
      }
      try (Jdbc db = options.jdbc()) {
        var before = TableStats.settled(db);
        Result r = s.popAck("pop-ack", consumers, batch, partitions, backlog, autoAck);
        Map<String, Object> extra = new LinkedHashMap<>(r.extra());
        extra.putAll(TableStats.describe(before, TableStats.settled(db)));
        return List.of(r.withExtra(extra));
      }
    }
  }

  @Command(
      name = "storage",
      description =
          "Bytes per stored message (schema size before and after), with 50 messages per"
              + " partition per push and with one message per segment.")
  static final class StorageCmd implements Callable<Integer> {
    @Mixin BenchOptions options;

    @Option(names = "--messages", defaultValue = "200000")
    int messages;

    @Override
    public Integer call() throws Exception {
      try (Jdbc db = options.jdbc();
          Target t = options.target(db)) {
        String schema = options.baseline == null ? "queen" : "bench_" + options.baseline;
        for (Storage.Shape shape : Storage.Shape.values()) {
          Result r = Storage.run(t, db, schema, shape, messages);
          System.out.println(r.summary());
          Report.append(options.out, r);
        }
      }
      return 0;
    }
  }

  @Command(
      name = "retention",
      description =
          "Minutes of steady push and pop+ack against a broker of its own, with a short"
              + " retentionSeconds and then without retention: the queen schema's size and the"
              + " broker's RSS over time, and the throughput of both.")
  static final class RetentionCmd implements Callable<Integer> {
    static final int PARTITIONS = 50;

    @Mixin BenchOptions options;

    @Mixin OwnBrokerPhases phases;

    @Option(names = "--retention-seconds", defaultValue = "30")
    int retentionSeconds;

    @Override
    public Integer call() throws Exception {
      return phases.run(
          options,
          List.of(
              new OwnBrokerPhases.Phase(
                  retentionSeconds,
                  Map.of(),
                  new RetentionRun.Shape(PARTITIONS, 0, "retention-" + retentionSeconds + "s")),
              new OwnBrokerPhases.Phase(
                  0, Map.of(), new RetentionRun.Shape(PARTITIONS, 0, "retention-off"))));
    }
  }

  @Command(name = "mixed", description = "Producers and consumers at once.")
  static final class Mixed extends Scenario {
    @Option(names = "--producers", defaultValue = "20")
    int producers;

    @Option(names = "--push-batch", defaultValue = "10")
    int pushBatch;

    @Option(names = "--consumers", defaultValue = "10")
    int consumers;

    @Option(names = "--pop-batch", defaultValue = "100")
    int popBatch;

    @Option(names = "--partitions", defaultValue = "50")
    int partitions;

    @Override
    List<Result> run(Scenarios s, Target t) throws Exception {
      return s.mixed("mixed", producers, pushBatch, consumers, popBatch, partitions, false);
    }
  }

  @Command(name = "fan-out", description = "One producer stream read by several consumer groups.")
  static final class FanOut extends Scenario {
    @Option(names = "--groups", defaultValue = "10")
    int groups;

    @Option(names = "--batch", defaultValue = "10")
    int batch;

    @Option(names = "--partitions", defaultValue = "20")
    int partitions;

    @Override
    List<Result> run(Scenarios s, Target t) throws Exception {
      return List.of(s.fanOut(groups, batch, partitions));
    }
  }

  @Command(
      name = "latency",
      description =
          "End-to-end latency (push response to pop response) at fractions of the throughput"
              + " measured first with the mixed shape.")
  static final class Latency extends Scenario {
    @Option(names = "--fractions", defaultValue = "0.25,0.5,0.8", split = ",")
    double[] fractions;

    @Option(names = "--consumers", defaultValue = "10")
    int consumers;

    @Option(names = "--partitions", defaultValue = "50")
    int partitions;

    @Override
    List<Result> run(Scenarios s, Target t) throws Exception {
      return s.latencyAtFractions("latency", fractions, consumers, partitions);
    }
  }

  @Command(
      name = "parked",
      description =
          "Thousands of long-polls parked on many partitions, each after a pop that did not wait:"
              + " idle database transactions/s, broker RSS (with --broker-pid), delivery latency of"
              + " a trickle of pushes.")
  static final class ParkedCmd implements Callable<Integer> {
    @Mixin BenchOptions options;

    @Option(names = "--consumers", defaultValue = "5000")
    int consumers;

    @Option(names = "--partitions", defaultValue = "1000")
    int partitions;

    @Option(names = "--rate", defaultValue = "50", description = "Pushes per second.")
    double rate;

    @Option(names = "--idle-seconds", defaultValue = "5")
    int idle;

    @Option(names = "--broker-pid", description = "Broker process, for its RSS.")
    Long pid;

    @Option(
        names = "--discovery",
        description =
            "Consumers pop by namespace (GET /api/v1/pop?namespace=) instead of by queue.")
    boolean discovery;

    @Override
    public Integer call() throws Exception {
      try (BrokerTarget t = new BrokerTarget(options.url)) {
        Result r =
            Parked.run(t, pid, consumers, partitions, rate, idle, options.seconds, discovery);
        System.out.println(r.summary());
        Report.append(options.out, r);
        return 0;
      }
    }
  }

  @Command(
      name = "many-partitions",
      description = "pop+ack over 10 and over 10,000 partitions: the ratio is the point.")
  static final class ManyPartitions extends Scenario {
    @Option(names = "--consumers", defaultValue = "16")
    int consumers;

    @Option(names = "--batch", defaultValue = "10")
    int batch;

    @Option(names = "--backlog", defaultValue = "100000")
    int backlog;

    @Override
    List<Result> run(Scenarios s, Target t) throws Exception {
      Result few = s.popAck("partitions-10", consumers, batch, 10, backlog, false);
      Result many = s.popAck("partitions-10000", consumers, batch, 10_000, backlog, false);
      return List.of(few, many);
    }
  }

  @Command(
      name = "queen-push",
      description = "Queen's push shape: 20 connections, batch 10, 50 partitions, 30 B.")
  static final class QueenPush extends Scenario {
    @Override
    List<Result> run(Scenarios s, Target t) throws Exception {
      return List.of(s.push("queen-push", 20, 10, 50, 30));
    }
  }

  @Command(
      name = "queen-pop",
      description = "Queen's pop shape: 10 connections, batch 100, autoAck, draining a backlog.")
  static final class QueenPop extends Scenario {
    @Option(names = "--backlog", defaultValue = "300000")
    int backlog;

    @Override
    List<Result> run(Scenarios s, Target t) throws Exception {
      return List.of(s.popAck("queen-pop", 10, 100, 50, backlog, true));
    }
  }

  @Command(name = "queen-mixed", description = "queen-push and queen-pop at once.")
  static final class QueenMixed extends Scenario {
    @Override
    List<Result> run(Scenarios s, Target t) throws Exception {
      return s.mixed("queen-mixed", 20, 10, 10, 100, 50, true);
    }
  }

  @Command(
      name = "report",
      description = "Render results.md and batch-chart.svg from results.json.")
  static final class Render implements Callable<Integer> {
    @Mixin BenchOptions options;

    @Override
    public Integer call() throws Exception {
      try (Jdbc db = options.jdbc()) {
        Report.render(options.out, Environment.describe(db));
      }
      System.out.println("wrote " + options.out.resolve("results.md"));
      return 0;
    }
  }

  @Command(
      name = "jmh",
      description =
          "JMH micro-benchmarks of the segment codec and the hot-list (JMH's own options follow).")
  static final class Jmh implements Callable<Integer> {
    /** Everything after {@code jmh} goes to JMH, e.g. {@code -f 1 -wi 2 -i 3 Codec}. */
    @CommandLine.Unmatched List<String> args = new java.util.ArrayList<>();

    @Override
    public Integer call() throws Exception {
      org.openjdk.jmh.Main.main(args.toArray(String[]::new));
      return 0;
    }
  }
}
