package queen.bench;

import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/** {@code queen bench admin}: see {@link AdminRun}. */
@Command(
    name = "admin",
    description =
        "A queue of many partitions filled with a deep log, then pushes and pop+acks while one"
            + " client times every admin GET a dashboard makes (p50/p99 per route).")
final class AdminCommand implements Callable<Integer> {
  @Mixin BenchOptions options;

  @Option(
      names = "--partitions",
      defaultValue = "10000",
      description = "Partitions of the queue it fills (default 10000).")
  int partitions;

  @Option(
      names = "--messages",
      defaultValue = "10000000",
      description = "Messages it fills the queue with before measuring (default 10000000).")
  long messages;

  @Option(
      names = "--queue",
      description = "Measure on this queue, filled by an earlier run, instead of filling one.")
  String queue;

  @Option(
      names = "--push-rate",
      defaultValue = "0",
      description =
          "Messages a second the producers push between them (batches of 10) and the consumers"
              + " pop (100 at a time) from the standing backlog; 0 (default) for both as fast as"
              + " they go.")
  int pushRate;

  @Override
  public Integer call() throws Exception {
    Result r =
        AdminRun.run(
            options.url, queue, partitions, messages, options.warmup, options.seconds, pushRate);
    System.out.println(r.summary());
    Report.append(options.out, r);
    return r.errors() > 0 ? 1 : 0;
  }
}
