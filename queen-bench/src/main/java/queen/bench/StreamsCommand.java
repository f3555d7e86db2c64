package queen.bench;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.Callable;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicLong;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/**
 * {@code queen bench streams}: stream cycles per second, each consuming one message and applying
 * one state upsert, one push to a sink and the ack in one {@code /streams/v1/cycle}, next to the
 * same work without state as three plain calls (pop, push, ack), at several worker counts in one
 * run.
 */
@Command(
    name = "streams",
    description =
        "Stream cycles (one upsert, one push, one ack each) against plain pop + push + ack of the"
            + " same shape, at several worker counts.")
final class StreamsCommand implements Callable<Integer> {
  private static final ObjectMapper JSON = new ObjectMapper();

  @Mixin BenchOptions options;

  @Option(names = "--workers", defaultValue = "1,8,32", split = ",")
  int[] workers;

  @Option(
      names = "--partitions",
      defaultValue = "64",
      description = "Source partitions: a partition serves one worker at a time.")
  int partitions;

  @Option(
      names = "--backlog",
      defaultValue = "60000",
      description = "Messages in the source queue of each run.")
  int backlog;

  @Override
  public Integer call() throws Exception {
    List<Result> all = new ArrayList<>();
    try (BrokerTarget target = new BrokerTarget(options.url);
        Http1 http = new Http1(options.url)) {
      Scenarios s = new Scenarios(target, options.warmup, options.seconds);
      for (int w : workers) {
        all.add(run(s, target, http, w, true));
        all.add(run(s, target, http, w, false));
      }
    }
    for (Result r : all) {
      System.out.println(r.summary());
      Report.append(options.out, r);
    }
    return all.stream().anyMatch(r -> r.errors() > 0) ? 1 : 0;
  }

  private Result run(Scenarios s, BrokerTarget target, Http1 http, int n, boolean cycles)
      throws Exception {
    String name = cycles ? "streams" : "streams-plain";
    String q = "bench-" + name + "-" + n + "-" + Long.toString(System.nanoTime(), 36);
    target.prepare(q, partitions);
    s.fill(q, partitions, backlog);
    String queryId = cycles ? register(http, q) : null;
    AtomicLong consumed = new AtomicLong();
    Run run = new Run(options.warmup, options.seconds);
    long end =
        run.workers(
            n,
            w -> {
              long t0 = System.nanoTime();
              Http1.Response popped =
                  http.get("/api/v1/pop/queue/" + q + "?batch=1&consumerGroup=streams", 0);
              if (popped.status() == 204) {
                return consumed.get() < backlog;
              }
              JsonNode m = JSON.readTree(popped.body()).get("messages").get(0);
              if (cycles) {
                cycle(http, queryId, q, m);
              } else {
                plain(http, q, m);
              }
              consumed.incrementAndGet();
              run.recorder.request(t0, 1);
              return true;
            });
    return Result.of(
        name,
        "broker",
        Result.params("workers", n, "partitions", partitions, "backlog", backlog),
        run.recorder,
        end,
        Map.of());
  }

  private static String register(Http1 http, String source) throws Exception {
    ObjectNode body =
        JSON.createObjectNode()
            .put("name", source)
            .put("source_queue", source)
            .put("sink_queue", source + "-sink")
            .put("config_hash", "bench");
    return JSON.readTree(post(http, "/streams/v1/queries", body).body()).get("query_id").asText();
  }

  /** One upsert, one push and the ack, in one cycle. */
  private static void cycle(Http1 http, String queryId, String q, JsonNode m) throws Exception {
    ObjectNode body =
        JSON.createObjectNode()
            .put("query_id", queryId)
            .put("partition_id", m.get("partitionId").asText())
            .put("consumer_group", "streams");
    body.putArray("state_ops")
        .addObject()
        .put("type", "upsert")
        .put("key", "last")
        .put("value", ThreadLocalRandom.current().nextInt());
    sinkItem(body.putArray("push_items").addObject(), q, m);
    body.putObject("ack")
        .put("transactionId", m.get("transactionId").asText())
        .put("leaseId", m.get("leaseId").asText())
        .put("status", "completed");
    JsonNode r = JSON.readTree(post(http, "/streams/v1/cycle", body).body());
    if (!r.path("success").asBoolean()) {
      throw new IllegalStateException("cycle refused: " + r);
    }
  }

  /** The same work without state: a push, then the ack. */
  private static void plain(Http1 http, String q, JsonNode m) throws Exception {
    ObjectNode push = JSON.createObjectNode();
    sinkItem(push.putArray("items").addObject(), q, m);
    post(http, "/api/v1/push", push);
    ObjectNode ack =
        JSON.createObjectNode()
            .put("transactionId", m.get("transactionId").asText())
            .put("partitionId", m.get("partitionId").asText())
            .put("leaseId", m.get("leaseId").asText())
            .put("consumerGroup", "streams")
            .put("status", "completed");
    // the single ack answers an array of one result, as Queen does
    JsonNode r = JSON.readTree(post(http, "/api/v1/ack", ack).body()).path(0);
    if (!r.path("success").asBoolean()) {
      throw new IllegalStateException("ack refused: " + r);
    }
  }

  private static void sinkItem(ObjectNode item, String q, JsonNode m) {
    item.put("queue", q + "-sink")
        .put("partition", m.get("partition").asText())
        .put("transactionId", UUID.randomUUID().toString())
        .putObject("payload")
        .put("in", m.get("transactionId").asText());
  }

  private static Http1.Response post(Http1 http, String path, JsonNode body) throws Exception {
    Http1.Response r =
        http.post(path, JSON.writeValueAsString(body).getBytes(StandardCharsets.UTF_8));
    if (r.status() >= 300) {
      throw new IllegalStateException(path + " answered " + r.status() + ": " + r.text());
    }
    return r;
  }
}
