package queen.server.http;

import static org.assertj.core.api.Assertions.assertThat;
import static queen.server.http.ApiErrors.assertError;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.net.URI;
import java.net.http.HttpRequest;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicInteger;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import queen.server.Broker;
import queen.server.TestBroker;
import queen.server.Wire;

/** Consumer groups reset by delete and seek (WIRE.md section 11), counted to the message. */
class ConsumerGroupAdminTest {
  @RegisterExtension
  static final TestBroker broker = new TestBroker(Map.of("QUEEN_STATE_REFRESH_MS", "200"));

  private final Wire wire = new Wire(broker);

  @Test
  void aDeletedGroupReadsEverythingAgainExactlyOnceAndInOrder() throws Exception {
    int partitions = 20;
    int perPartition = 500;
    for (int p = 0; p < partitions; p++) {
      for (int from = 0; from < perPartition; from += 100) {
        wire.pushNumbered("replay", "p" + p, from, 100);
      }
    }
    assertThat(drain("replay", "g", partitions * perPartition)).isEqualTo(perPartition(20, 500));

    JsonNode deleted = broker.delete("/api/v1/consumer-groups/g").json();
    assertThat(deleted.get("success").asBoolean()).isTrue();
    assertThat(deleted.get("deletedPartitions").asInt()).isEqualTo(partitions);
    assertThat(deleted.get("metadataDeleted").asBoolean()).isTrue();

    assertThat(drain("replay", "g", partitions * perPartition))
        .as("the second reading: everything again, once, in order")
        .isEqualTo(perPartition(20, 500));
  }

  @Test
  void seekBackToATimestampRedeliversExactlyTheMessagesCreatedAtOrAfterIt() {
    wire.pushNumbered("seekts", "p", 0, 3);
    Instant between = afterNewestSegment("seekts");
    wire.pushNumbered("seekts", "p", 3, 2);
    wire.pushNumbered("seekts", "q", 0, 2);
    JsonNode all = popAll("seekts", "ts", 100);
    assertThat(all.get("messages")).hasSize(7);

    JsonNode seek =
        broker
            .post(
                "/api/v1/consumer-groups/ts/queues/seekts/seek",
                Wire.object().put("timestamp", between.toString()))
            .json();
    assertThat(seek.get("success").asBoolean()).isTrue();
    assertThat(seek.get("partitionsUpdated").asInt()).isEqualTo(2);
    assertThat(seek.get("targetTimestamp").asText()).isEqualTo(between.toString());

    Map<String, List<Integer>> again = byPartition(popAll("seekts", "ts", 100));
    assertThat(again).containsOnlyKeys("p", "q");
    assertThat(again.get("p")).containsExactly(3, 4);
    assertThat(again.get("q")).containsExactly(0, 1);
    assertThat(popAll("seekts", "ts", 100)).isNull();
  }

  @Test
  void seekToTheEndSkipsTheBacklogAndLaterPushesArrive() {
    wire.pushNumbered("seekend", "a", 0, 5);
    wire.pushNumbered("seekend", "b", 0, 5);
    JsonNode seek =
        broker
            .post(
                "/api/v1/consumer-groups/skipper/queues/seekend/seek",
                Wire.object().put("toEnd", true))
            .json();
    assertThat(seek.get("seekToEnd").asBoolean()).isTrue();
    assertThat(seek.get("targetTimestamp").isNull()).isTrue();
    assertThat(popAll("seekend", "skipper", 100)).as("backlog skipped").isNull();
    wire.pushNumbered("seekend", "b", 5, 2);
    assertThat(byPartition(popAll("seekend", "skipper", 100)))
        .isEqualTo(Map.of("b", List.of(5, 6)));
  }

  @ParameterizedTest
  @ValueSource(strings = {"seek", "partitions/p/seek"})
  void aSeekForgetsTheFailedRangeSoAReplayHasItsWholeRetryBudget(String route) {
    String queue = "seekretry-" + route.length();
    wire.configure(queue, Wire.object().put("retryLimit", 3));
    wire.pushNumbered(queue, "p", 0, 4);
    // partition p's: configure made a partition Default too, where the queue's seek adds a cursor
    String retryEnd = Wire.cursorOf(queue, "rg", "coalesce(c.retry_end, -1)") + " and p.name = 'p'";
    wire.ackAll(wire.popPartition(queue, "p", "consumerGroup=rg&batch=4").json(), "failed", "x");
    assertThat(broker.sqlLong(retryEnd)).as("the failed batch's end").isEqualTo(3);
    String seek = "/api/v1/consumer-groups/rg/queues/" + queue + "/" + route;
    // the queue's seek goes back to the start (a replay); a partition's seek goes to its end
    ObjectNode to =
        route.equals("seek")
            ? Wire.object().put("timestamp", "2000-01-01T00:00:00Z")
            : Wire.object().put("toEnd", true);
    assertThat(broker.post(seek, to).status()).isEqualTo(200);
    assertThat(broker.sqlLong(retryEnd)).isEqualTo(-1);
  }

  @Test
  void aSeekDuringALiveLeaseRefusesThatLeasesAckAndLosesNothing() {
    wire.pushNumbered("leased", "p", 0, 6);
    JsonNode leased =
        broker.get("/api/v1/pop/queue/leased/partition/p?consumerGroup=w&batch=4").json();
    assertThat(Wire.numbers(leased)).containsExactly(0, 1, 2, 3);
    broker.post(
        "/api/v1/consumer-groups/w/queues/leased/seek",
        Wire.object().put("timestamp", "2000-01-01T00:00:00Z"));

    JsonNode ack = wire.ackAll(leased);
    assertThat(ack).allSatisfy(a -> assertThat(a.get("success").asBoolean()).isFalse());
    assertThat(
            broker
                .get("/api/v1/consumer-groups/w")
                .json()
                .at("/leased/partitions/0/committedOffset")
                .asLong())
        .isEqualTo(-1);

    JsonNode again = broker.get("/api/v1/pop/queue/leased/partition/p?consumerGroup=w").json();
    assertThat(Wire.numbers(again)).containsExactly(0, 1, 2, 3, 4, 5);
    assertThat(wire.ackAll(again))
        .allSatisfy(a -> assertThat(a.get("success").asBoolean()).isTrue());
  }

  @Test
  void aPartitionSeeksToItsEnd() {
    wire.pushNumbered("one", "x", 0, 4);
    wire.pushNumbered("one", "y", 0, 4);
    JsonNode r =
        broker
            .post("/api/v1/consumer-groups/pg/queues/one/partitions/x/seek", Wire.object())
            .json();
    assertThat(r.get("cursorMovedTo").asLong()).isEqualTo(3);
    assertThat(r.get("partitionName").asText()).isEqualTo("x");
    assertThat(byPartition(popAll("one", "pg", 100))).isEqualTo(Map.of("y", List.of(0, 1, 2, 3)));

    TestBroker.Reply unknown =
        broker.post("/api/v1/consumer-groups/pg/queues/one/partitions/nope/seek", Wire.object());
    assertError(unknown, 404, "Partition not found");
  }

  @Test
  void aSubscriptionUpdateMovesOnlyCursorsCreatedAfterIt() {
    wire.pushNumbered("subs", "old", 0, 3);
    assertThat(popAll("subs", "s", 100).get("messages")).hasSize(3);
    Instant later = afterNewestSegment("subs");
    JsonNode r =
        broker
            .post(
                "/api/v1/consumer-groups/s/subscription",
                Wire.object().put("subscriptionTimestamp", later.toString()))
            .json();
    assertThat(r.get("rowsUpdated").asInt()).isEqualTo(1);
    assertThat(r.get("newTimestamp").asText()).isEqualTo(later.toString());

    wire.pushNumbered("subs", "old", 3, 1);
    wire.pushNumbered("subs", "fresh", 0, 2);
    Map<String, List<Integer>> got = byPartition(popAll("subs", "s", 100));
    assertThat(got.get("old")).as("an existing cursor stays where it is").containsExactly(3);
    assertThat(got.get("fresh"))
        .as("a new cursor starts at the new timestamp")
        .containsExactly(0, 1);
  }

  @Test
  void deletingWithoutMetadataKeepsTheSubscription() {
    wire.pushNumbered("keepsub", "p", 0, 3);
    broker.get("/api/v1/pop/queue/keepsub?consumerGroup=k&subscriptionMode=new&autoAck=true");
    wire.pushNumbered("keepsub", "p", 3, 2);
    assertThat(Wire.numbers(popAll("keepsub", "k", 100))).containsExactly(3, 4);

    JsonNode d =
        broker.delete("/api/v1/consumer-groups/k/queues/keepsub?deleteMetadata=false").json();
    assertThat(d.get("queueName").asText()).isEqualTo("keepsub");
    assertThat(d.get("metadataDeleted").asBoolean()).isFalse();
    assertThat(Wire.numbers(popAll("keepsub", "k", 100)))
        .as("the cursor is recreated from the recorded subscription, not from the beginning")
        .containsExactly(3, 4);
  }

  @Test
  void aSeekThroughOneBrokerIsSeenByPopsOnAnother() {
    wire.pushNumbered("mesh", "p", 0, 5);
    try (Broker other = broker.startAnother()) {
      String on = "http://127.0.0.1:" + other.port();
      JsonNode first = getJson(on + "/api/v1/pop/queue/mesh?consumerGroup=m&batch=10&autoAck=true");
      assertThat(Wire.numbers(first)).containsExactly(0, 1, 2, 3, 4);
      assertThat(status(on + "/api/v1/pop/queue/mesh?consumerGroup=m&autoAck=true")).isEqualTo(204);

      broker.post(
          "/api/v1/consumer-groups/m/queues/mesh/seek",
          Wire.object().put("timestamp", "2000-01-01T00:00:00Z"));
      Awaitility.await()
          .atMost(Duration.ofSeconds(5))
          .until(() -> status(on + "/api/v1/pop/queue/mesh?consumerGroup=m&batch=1") == 200);
      assertThat(
              getJson(on + "/api/v1/consumer-groups/m").at("/mesh/partitions/0/offsetLag").asInt())
          .isEqualTo(5);
    }
  }

  @Test
  void badInputIsA4xxNamingTheProblem() {
    wire.pushNumbered("bad", "p", 0, 1);
    assertError(broker.get("/api/v1/consumer-groups/nobody"), 404, "Consumer group not found");
    assertError(
        broker.post("/api/v1/consumer-groups/g/queues/bad/seek", Wire.object()),
        400,
        "Must specify either 'toEnd': true or 'timestamp'");
    assertError(
        broker.post(
            "/api/v1/consumer-groups/g/queues/bad/seek", Wire.object().put("timestamp", "soon")),
        400,
        "timestamp must be an ISO-8601 timestamp, got 'soon'");
    assertError(
        broker.post("/api/v1/consumer-groups/g/queues/none/seek", Wire.object().put("toEnd", true)),
        404,
        "Queue not found");
    assertError(
        broker.post("/api/v1/consumer-groups/g/subscription", Wire.object()),
        400,
        "Missing subscriptionTimestamp in request body");
    assertError(
        broker.post(
            "/api/v1/consumer-groups/g/subscription",
            Wire.object().put("subscriptionTimestamp", "yesterday")),
        400,
        "subscriptionTimestamp must be an ISO-8601 timestamp, got 'yesterday'");
    assertError(
        broker.post(
            "/api/v1/consumer-groups/__QUEUE_MODE__/subscription",
            Wire.object().put("subscriptionTimestamp", "2026-01-01T00:00:00Z")),
        400,
        "Queue mode (__QUEUE_MODE__) has no subscription: it reads every partition from its first"
            + " message; seek it instead");
    assertError(broker.delete("/api/v1/consumer-groups/g/queues/none"), 404, "Queue not found");
    JsonNode nothing = broker.delete("/api/v1/consumer-groups/never-seen").json();
    assertThat(nothing.get("success").asBoolean()).isTrue();
    assertThat(nothing.get("deletedPartitions").asInt()).isZero();
  }

  /**
   * Consumes {@code expected} messages with four concurrent consumers (wildcard pops of up to 100,
   * each batch recorded before its ack, so per-partition order is the delivery order).
   */
  private Map<String, List<Integer>> drain(String queue, String group, int expected)
      throws Exception {
    Map<String, List<Integer>> seen = new HashMap<>();
    AtomicInteger total = new AtomicInteger();
    ExecutorService pool = Executors.newFixedThreadPool(4);
    try {
      List<Future<?>> workers = new ArrayList<>();
      long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
      for (int w = 0; w < 4; w++) {
        workers.add(
            pool.submit(
                () -> {
                  while (total.get() < expected && System.nanoTime() < deadline) {
                    TestBroker.Reply r =
                        broker.get(
                            "/api/v1/pop/queue/"
                                + queue
                                + "?consumerGroup="
                                + group
                                + "&batch=100&wait=true&timeout=500");
                    if (r.status() != 200) {
                      continue;
                    }
                    JsonNode answer = r.json();
                    synchronized (seen) {
                      for (JsonNode m : answer.get("messages")) {
                        seen.computeIfAbsent(m.get("partition").asText(), k -> new ArrayList<>())
                            .add(m.get("data").get("n").asInt());
                      }
                    }
                    total.addAndGet(answer.get("messages").size());
                    wire.ackAll(answer);
                  }
                  return null;
                }));
      }
      for (Future<?> f : workers) {
        f.get();
      }
    } finally {
      pool.shutdownNow();
    }
    return seen;
  }

  private static Map<String, List<Integer>> perPartition(int partitions, int count) {
    Map<String, List<Integer>> m = new HashMap<>();
    for (int p = 0; p < partitions; p++) {
      List<Integer> ns = new ArrayList<>();
      for (int n = 0; n < count; n++) {
        ns.add(n);
      }
      m.put("p" + p, ns);
    }
    return m;
  }

  /** Pops up to {@code batch} with the group and acks them; null when there was nothing. */
  private JsonNode popAll(String queue, String group, int batch) {
    TestBroker.Reply r =
        broker.get(
            "/api/v1/pop/queue/"
                + queue
                + "?consumerGroup="
                + group
                + "&batch="
                + batch
                + "&partitions=100");
    if (r.status() == 204) {
      return null;
    }
    assertThat(r.status()).as(r.text()).isEqualTo(200);
    wire.ackAll(r.json());
    return r.json();
  }

  private static Map<String, List<Integer>> byPartition(JsonNode answer) {
    Map<String, List<Integer>> m = new HashMap<>();
    for (JsonNode msg : answer.get("messages")) {
      m.computeIfAbsent(msg.get("partition").asText(), k -> new ArrayList<>())
          .add(msg.get("data").get("n").asInt());
    }
    return m;
  }

  /** A millisecond after the queue's newest segment, once the database clock has passed it. */
  private static Instant afterNewestSegment(String queue) {
    Instant t =
        Instant.ofEpochMilli(
                broker.sqlLong(
                    "select (extract(epoch from max(s.created_at)) * 1000)::bigint + 1"
                        + " from queen.log_segments s join queen.log_partitions p on p.id ="
                        + " s.partition_id join queen.queues q on q.id = p.queue_id"
                        + " where q.name = '"
                        + queue
                        + "'"))
            .truncatedTo(ChronoUnit.MILLIS);
    Awaitility.await()
        .atMost(Duration.ofSeconds(5))
        .until(() -> broker.sqlLong("select (now() > '" + t + "'::timestamptz)::int") == 1);
    return t;
  }

  private static JsonNode getJson(String url) {
    return broker.send(HttpRequest.newBuilder(URI.create(url)).build()).json();
  }

  private static int status(String url) {
    return broker.send(HttpRequest.newBuilder(URI.create(url)).build()).status();
  }
}
