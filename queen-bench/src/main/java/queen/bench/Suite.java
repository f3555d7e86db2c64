package queen.bench;

import java.nio.file.Files;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.concurrent.TimeUnit;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/**
 * {@code queen bench suite}: the standard matrix behind docs/benchmarks.md. Starts its own broker
 * process on a fresh database, runs every scenario against the broker and, where the issue asks for
 * a ratio, against both baselines in the same run, then renders the report.
 */
@Command(
    name = "suite",
    description =
        "Run the standard matrix (broker, naive and ceiling) with a broker of its own and render"
            + " the report into --out.")
final class Suite implements Callable<Integer> {
  @Mixin BenchOptions options;

  @Option(
      names = "--database",
      defaultValue = "queen_bench",
      description = "Database to (re)create for the run.")
  String database;

  @Option(names = "--port", defaultValue = "6699")
  int port;

  @Option(names = "--broker-main", defaultValue = "queen.cli.Main", hidden = true)
  String brokerMain;

  @Option(names = "--skip-parked", description = "Leave out the 5,000-consumer parked scenario.")
  boolean skipParked;

  private static final int IDLE_AFTER_START_SECONDS = 15;

  /**
   * The parked scenario's long-polls outlive their clients by up to their 30 s wait, and G1's
   * periodic collection (the launcher's defaults) comes 30-60 s after the last collection.
   */
  private static final int IDLE_AFTER_LOAD_SECONDS = 100;

  @Override
  public Integer call() throws Exception {
    Files.createDirectories(options.out);
    Files.deleteIfExists(options.out.resolve("results.json"));
    options.recreate(database);
    List<Result> all = new ArrayList<>();
    try (Jdbc db = options.jdbc();
        BrokerProcess broker =
            BrokerProcess.start(brokerMain, port, database, options.out.resolve("broker.log"))) {
      Map<String, Object> env = Environment.describe(db);
      env.forEach((k, v) -> System.out.println(k + ": " + v));
      List<Target> targets =
          List.of(new BrokerTarget(broker.url), new NaiveTarget(db), new CeilingTarget(db));
      long pid = broker.pid();
      record(all, null, idle(pid, "start", IDLE_AFTER_START_SECONDS));
      fresh(pid);
      for (Target t : targets) {
        // the broker's peak memory is read per scenario; the baselines run in this process
        Long peakOf = t instanceof BrokerTarget ? pid : null;
        Scenarios s = new Scenarios(t, options.warmup, options.seconds);
        record(all, peakOf, s.push("queen-push", 20, 10, 50, 30));
        // a backlog must outlast warm-up plus the measured window at the target's speed
        int[] backlogs = backlogs(t);
        record(all, peakOf, s.popAck("queen-pop", 10, 100, 50, backlogs[3], true));
        record(all, peakOf, s.mixed("queen-mixed", 20, 10, 10, 100, 50, true));
        for (int batch : new int[] {1, 10, 100}) {
          record(all, peakOf, s.push("push", 16, batch, 100, 30));
        }
        record(all, peakOf, s.push("push-1KB", 16, 10, 100, 1024));
        int i = 0;
        for (int batch : new int[] {1, 10, 100}) {
          record(all, peakOf, s.popAck("pop-ack", 16, batch, 100, backlogs[i++], false));
        }
      }
      BrokerTarget b = (BrokerTarget) targets.getFirst();
      Scenarios s = new Scenarios(b, options.warmup, options.seconds);
      record(all, pid, s.popAck("partitions-10", 16, 10, 10, 100_000, false));
      record(all, pid, s.popAck("partitions-10000", 16, 10, 10_000, 100_000, false));
      record(all, pid, s.fanOut(10, 10, 20));
      List<Result> max = s.mixed("latency-max", 20, 10, 10, 100, 50, false);
      record(all, pid, max);
      double capacity = Math.min(max.get(0).rate(), max.get(1).rate());
      for (double f : new double[] {0.25, 0.5, 0.8}) {
        record(all, pid, s.latency("latency-" + Math.round(f * 100) + "pct", capacity * f, 10, 50));
      }
      if (!skipParked) {
        // its column is the memory with every consumer parked, which it reads itself
        record(all, null, Parked.run(b, pid, 5_000, 1_000, 50, 5, options.seconds, false));
      }
      record(all, null, idle(pid, "load", IDLE_AFTER_LOAD_SECONDS));
      for (Target t : targets) {
        t.close();
      }
      Report.render(options.out, env);
    }
    System.out.println("wrote " + options.out.resolve("results.md"));
    return all.stream().anyMatch(r -> r.errors() > 0) ? 1 : 0;
  }

  /** Backlogs for pop-ack at batch 1, 10, 100 and for queen-pop, sized to each target's speed. */
  private static int[] backlogs(Target t) {
    return switch (t) {
      case CeilingTarget c -> new int[] {60_000, 600_000, 5_000_000, 5_000_000};
      case NaiveTarget n -> new int[] {40_000, 200_000, 800_000, 800_000};
      default -> new int[] {20_000, 100_000, 600_000, 800_000};
    };
  }

  /**
   * A broker left alone: its resident memory after this long without requests (after start, or
   * after the load, once G1's periodic collection has had the chance to give memory back).
   */
  private static Result idle(long pid, String after, int seconds) throws InterruptedException {
    TimeUnit.SECONDS.sleep(seconds);
    return new Result(
        "idle",
        "broker",
        Result.params("after", after, "seconds", seconds),
        seconds,
        0,
        0,
        0,
        0,
        0,
        0,
        0,
        Result.params(Report.RSS_NOW, Rss.now(pid)));
  }

  private void record(List<Result> all, Long peakOf, Result r) {
    record(all, peakOf, List.of(r));
  }

  /**
   * Prints and stores a scenario's results; with the broker's pid, each gets the broker's peak
   * resident memory since the last scenario, and the peak starts again after a full collection.
   */
  private void record(List<Result> all, Long peakOf, List<Result> results) {
    Long peak = peakOf == null ? null : Rss.peak(peakOf);
    for (Result r : results) {
      Result measured = r;
      if (peak != null) {
        Map<String, Object> extra = new LinkedHashMap<>(r.extra());
        extra.put(Report.RSS_PEAK, peak);
        measured = r.withExtra(extra);
      }
      System.out.println(measured.summary());
      all.add(measured);
      try {
        Report.append(options.out, measured);
      } catch (Exception e) {
        throw new IllegalStateException(e);
      }
    }
    if (peakOf != null) {
      fresh(peakOf);
    }
  }

  /**
   * The broker's heap collected and its peak started again, for the next scenario; nothing when the
   * broker has died (its scenarios then report their errors, and the report is still written).
   */
  private static void fresh(long pid) {
    if (!Rss.alive(pid)) {
      System.err.println("bench: the broker (pid " + pid + ") is gone; no RSS from here on");
      return;
    }
    try {
      Rss.collect(pid);
      Rss.settle(pid);
      Rss.resetPeak(pid);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException(e);
    }
  }
}
