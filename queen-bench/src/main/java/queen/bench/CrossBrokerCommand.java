package queen.bench;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/**
 * {@code queen bench cross-broker}: the latency scenario with producers on one broker and consumers
 * long-polling on another (A to B, then the mirror B to A), next to the same scenario on broker A
 * alone, measured in one run. Each shape first measures its mixed throughput, then the
 * push-response to pop-response latency at fractions of it.
 */
@Command(
    name = "cross-broker",
    description =
        "Latency with producers on broker A and long-polling consumers on broker B (and the"
            + " mirror), next to the single-broker latency of the same run.")
final class CrossBrokerCommand implements Callable<Integer> {
  @Mixin BenchOptions options;

  @Option(names = "--url-b", required = true, description = "The second broker, same database.")
  String urlB;

  @Option(names = "--fractions", defaultValue = "0.25,0.5,0.8", split = ",")
  double[] fractions;

  @Option(names = "--consumers", defaultValue = "10")
  int consumers;

  @Option(names = "--partitions", defaultValue = "50")
  int partitions;

  /** Pushes through one broker, pops and acks through the other. */
  private record Split(BrokerTarget pushes, BrokerTarget pops, String name) implements Target {
    @Override
    public void prepare(String queue, int partitions) throws Exception {
      pushes.prepare(queue, partitions);
    }

    @Override
    public void push(String queue, List<Message> batch) throws Exception {
      pushes.push(queue, batch);
    }

    @Override
    public Delivery pop(String queue, String group, int batch, boolean autoAck, long waitMillis)
        throws Exception {
      return pops.pop(queue, group, batch, autoAck, waitMillis);
    }

    @Override
    public void ack(Delivery delivery) throws Exception {
      pops.ack(delivery);
    }

    @Override
    public void close() throws Exception {
      pushes.close();
      pops.close();
    }
  }

  @Override
  public Integer call() throws Exception {
    List<Result> all = new ArrayList<>();
    try (BrokerTarget a = new BrokerTarget(options.url);
        BrokerTarget b = new BrokerTarget(urlB);
        BrokerTarget a2 = new BrokerTarget(options.url);
        BrokerTarget b2 = new BrokerTarget(urlB)) {
      all.addAll(shape("single", a));
      all.addAll(shape("a-to-b", new Split(a2, b, "a-to-b")));
      all.addAll(shape("b-to-a", new Split(b2, a2, "b-to-a")));
    }
    for (Result r : all) {
      System.out.println(r.summary());
      Report.append(options.out, r);
    }
    return all.stream().anyMatch(r -> r.errors() > 0) ? 1 : 0;
  }

  private List<Result> shape(String label, Target t) throws Exception {
    return new Scenarios(t, options.warmup, options.seconds)
        .latencyAtFractions(label, fractions, consumers, partitions);
  }
}
