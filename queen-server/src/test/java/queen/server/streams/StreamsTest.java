package queen.server.streams;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;
import static queen.server.Wire.item;
import static queen.server.Wire.object;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import queen.server.TestBroker;
import queen.server.Wire;

/** The streams routes' contract: registration, one atomic cycle, state reads. */
class StreamsTest {
  @RegisterExtension static final TestBroker broker = new TestBroker();
  private final Wire wire = new Wire(broker);
  private final Streams streams = new Streams(broker);

  @Test
  void sameHashFindsTheQueryAnotherIsRefusedUnlessReset() {
    JsonNode first =
        broker.post("/streams/v1/queries", Streams.query("q-reg", "reg-src", "a1")).json();
    assertThat(first.get("fresh").asBoolean()).isTrue();
    JsonNode again =
        broker.post("/streams/v1/queries", Streams.query("q-reg", "reg-src", "a1")).json();
    assertThat(again.get("query_id").asText()).isEqualTo(first.get("query_id").asText());
    assertThat(again.get("fresh").asBoolean()).isFalse();

    TestBroker.Reply conflict =
        broker.post("/streams/v1/queries", Streams.query("q-reg", "reg-src", "b2"));
    assertThat(conflict.status()).isEqualTo(409);
    assertThat(conflict.json().get("error").asText()).contains("a1").contains("b2");

    wire.pushNumbered("reg-src", "p0", 0, 1);
    JsonNode m = streams.pop("reg-src", 1).get("messages").get(0);
    String id = first.get("query_id").asText();
    assertThat(
            broker
                .post("/streams/v1/cycle", Streams.cycle(id, m, "reg-out", "k", 1))
                .json()
                .get("success")
                .asBoolean())
        .isTrue();
    assertThat(streams.state(id, m.get("partitionId").asText())).hasSize(1);

    JsonNode reset =
        broker
            .post("/streams/v1/queries", Streams.query("q-reg", "reg-src", "b2").put("reset", true))
            .json();
    assertThat(reset.get("reset").asBoolean()).isTrue();
    assertThat(reset.get("query_id").asText()).isEqualTo(id);
    assertThat(streams.state(id, m.get("partitionId").asText()))
        .as("reset deletes the state")
        .isEmpty();
    assertThat(broker.post("/streams/v1/queries", Streams.query("q-reg", "reg-src", "b2")).status())
        .isEqualTo(200);
  }

  @Test
  void aCycleCommitsStatePushesAndTheAckOfTheWholeBatchPrefix() {
    String id = streams.register("q-commit", "commit-src");
    wire.pushNumbered("commit-src", "p0", 0, 3);
    JsonNode popped = streams.pop("commit-src", 3);
    JsonNode last = popped.get("messages").get(2);
    JsonNode r =
        broker.post("/streams/v1/cycle", Streams.cycle(id, last, "commit-out", "total", 3)).json();

    assertThat(r.get("success").asBoolean()).as(r.toString()).isTrue();
    assertThat(r.get("state_ops_applied").asInt()).isEqualTo(1);
    assertThat(r.get("queueName").asText()).isEqualTo("commit-src");
    assertThat(r.get("push_results").get(0).get("status").asText()).isEqualTo("queued");
    assertThat(r.get("ack_result").get("lease_released").asBoolean()).isTrue();
    JsonNode rows = streams.state(id, last.get("partitionId").asText());
    assertThat(rows.get(0).get("key").asText()).isEqualTo("total");
    assertThat(rows.get(0).get("value").get("count").asInt()).isEqualTo(3);
    assertThat(rows.get(0).get("updated_at").asText()).endsWith("Z");
    assertThat(broker.get("/api/v1/pop/queue/commit-src?consumerGroup=g1").status())
        .as("the whole batch is consumed")
        .isEqualTo(204);

    JsonNode replay =
        broker.post("/streams/v1/cycle", Streams.cycle(id, last, "commit-out", "total", 6)).json();
    assertThat(replay.get("success").asBoolean()).as("a replayed cycle is refused").isFalse();
    assertThat(
            streams
                .state(id, last.get("partitionId").asText())
                .get(0)
                .get("value")
                .get("count")
                .asInt())
        .isEqualTo(3);
  }

  @Test
  void aCycleThatFailsHalfWayChangesNothing() {
    String id = streams.register("q-half", "half-src");
    wire.pushNumbered("half-src", "p0", 0, 1);
    JsonNode m = streams.pop("half-src", 1).get("messages").get(0);
    ObjectNode body = Streams.cycle(id, m, "streams-sink-half", "k", 1);
    ((ArrayNode) body.get("state_ops")).addObject().put("type", "increment").put("key", "k");
    JsonNode r = broker.post("/streams/v1/cycle", body).json();
    assertThat(r.get("success").asBoolean()).isFalse();
    assertThat(r.get("error").asText()).contains("increment");
    assertThat(streams.state(id, m.get("partitionId").asText())).isEmpty();
    assertThat(streams.sinkCount("streams-sink-half")).isZero();

    ObjectNode good = Streams.cycle(id, m, "streams-sink-half", "k", 1);
    assertThat(broker.post("/streams/v1/cycle", good).json().get("success").asBoolean())
        .as("the lease was untouched by the failed cycle")
        .isTrue();
    assertThat(streams.sinkCount("streams-sink-half")).isEqualTo(1);
  }

  @Test
  void aCycleWhoseLeaseExpiredChangesNothing() {
    String id = streams.register("q-expired", "expired-src");
    wire.pushNumbered("expired-src", "p0", 0, 2);
    JsonNode m = streams.pop("expired-src", 2).get("messages").get(1);
    broker.sql(
        "update queen.log_consumers set lease_expires_at = now() - interval '1 second'"
            + " where worker_id = '"
            + m.get("leaseId").asText()
            + "'");
    ObjectNode body = Streams.cycle(id, m, "streams-sink-expired", "k", 2);
    JsonNode r = broker.post("/streams/v1/cycle", body).json();
    assertThat(r.get("success").asBoolean()).isFalse();
    assertThat(r.get("error").asText()).contains("Invalid or expired lease");
    assertThat(streams.state(id, m.get("partitionId").asText())).isEmpty();
    assertThat(streams.sinkCount("streams-sink-expired")).isZero();
    assertThat(streams.pop("expired-src", 2).get("messages")).as("redelivered in full").hasSize(2);
  }

  @Test
  void withoutReleaseTheLeaseStaysForTheRestOfTheBatch() {
    String id = streams.register("q-partial", "partial-src");
    wire.pushNumbered("partial-src", "p0", 0, 3);
    JsonNode messages = streams.pop("partial-src", 3).get("messages");
    ObjectNode first =
        Streams.cycle(id, messages.get(0), "partial-out", "k", 1).put("release_lease", false);
    JsonNode r = broker.post("/streams/v1/cycle", first).json();
    assertThat(r.get("ack_result").get("lease_released").asBoolean()).isFalse();
    assertThat(broker.get("/api/v1/pop/queue/partial-src?consumerGroup=g1").status())
        .as("the rest of the batch stays leased")
        .isEqualTo(204);
    JsonNode end =
        broker
            .post("/streams/v1/cycle", Streams.cycle(id, messages.get(2), "partial-out", "k", 3))
            .json();
    assertThat(end.get("ack_result").get("lease_released").asBoolean()).isTrue();
    assertThat(streams.committed(messages.get(0))).isEqualTo(2);
  }

  @Test
  void aLeaseReleasedShortByACycleIsNotToldItAckedWhatWentOutAgain() {
    String id = streams.register("q-short", "short-src");
    wire.pushNumbered("short-src", "p0", 0, 3);
    JsonNode first = streams.pop("short-src", 3);
    JsonNode released =
        broker
            .post(
                "/streams/v1/cycle",
                Streams.cycle(id, first.get("messages").get(0), "short-out", "k", 1))
            .json();
    assertThat(released.get("ack_result").get("lease_released").asBoolean()).isTrue();
    JsonNode again = streams.pop("short-src", 3);
    assertThat(Wire.numbers(again)).containsExactly(1, 2);
    assertThat(wire.ackAll(again)).allMatch(a -> a.get("success").asBoolean());
    JsonNode late =
        wire.ackOne(first.get("messages").get(1), first.get("leaseId").asText(), "g1")
            .json()
            .get(0);
    assertThat(late.get("success").asBoolean()).as(late.toString()).isFalse();
  }

  @Test
  void aFailedAckSpendsTheRetryBudgetAsOnTheAckRoute() {
    String id = streams.register("q-failed", "failed-src");
    wire.configure("failed-src", object().put("retryLimit", 1));
    wire.pushNumbered("failed-src", "p0", 0, 1);
    for (int attempt = 0; attempt < 2; attempt++) {
      JsonNode m = streams.pop("failed-src", 1).get("messages").get(0);
      ObjectNode body = Streams.cycle(id, m, "failed-out", "attempts", attempt + 1);
      ((ObjectNode) body.get("ack")).put("status", "failed");
      JsonNode refused = broker.post("/streams/v1/cycle", body).json();
      assertThat(refused.get("error").asText())
          .as("the message comes back: its state and outputs would apply twice")
          .contains("cannot carry state_ops or push_items");
      body.remove("state_ops");
      body.remove("push_items");
      JsonNode r = broker.post("/streams/v1/cycle", body).json();
      assertThat(r.get("success").asBoolean()).as(r.toString()).isTrue();
      assertThat(r.get("ack_result").get("dlq").asBoolean())
          .as("dead-lettered once the budget is spent")
          .isEqualTo(attempt == 1);
    }
    assertThat(broker.get("/api/v1/pop/queue/failed-src?consumerGroup=g1").status()).isEqualTo(204);
    assertThat(
            broker.sqlLong(
                "select count(*) from queen.dead_letters d join queen.log_partitions p"
                    + " on p.id = d.partition_id join queen.queues q on q.id = p.queue_id"
                    + " where q.name = 'failed-src'"))
        .isEqualTo(1);
  }

  @Test
  void aReplayedDeadLetteringCycleIsRefusedAsACompletedOneIs() {
    String id = streams.register("q-dlq-replay", "dlq-replay-src");
    wire.pushNumbered("dlq-replay-src", "p0", 0, 3);
    JsonNode first = streams.pop("dlq-replay-src", 3).get("messages").get(0);
    ObjectNode body =
        Streams.cycle(id, first, "dlq-replay-out", "k", 1).put("release_lease", false);
    ((ObjectNode) body.get("ack")).put("status", "dlq");
    assertThat(
            broker.post("/streams/v1/cycle", body).json().get("ack_result").get("dlq").asBoolean())
        .isTrue();
    JsonNode replay = broker.post("/streams/v1/cycle", body).json();
    assertThat(replay.get("success").asBoolean()).isFalse();
    assertThat(streams.sinkCount("dlq-replay-out"))
        .as("the outputs were written once")
        .isEqualTo(1);
  }

  @Test
  void aLaterMessageDeadLetteredFirstIsPassedByTheCompletedAckBeforeIt() {
    String id = streams.register("q-dlq-last", "dlq-last-src");
    wire.pushNumbered("dlq-last-src", "p0", 0, 3);
    JsonNode messages = streams.pop("dlq-last-src", 3).get("messages");
    ObjectNode poison =
        Streams.cycle(id, messages.get(2), "dlq-last-out", "k", 1).put("release_lease", false);
    ((ObjectNode) poison.get("ack")).put("status", "dlq");
    JsonNode refused = broker.post("/streams/v1/cycle", poison).json();
    assertThat(refused.get("success").asBoolean())
        .as("ahead of the cursor its message may come back with the batch: effects applied twice")
        .isFalse();
    assertThat(refused.get("error").asText()).contains("only for the next message");
    assertThat(streams.sinkCount("dlq-last-out")).as("nothing of it applied").isZero();
    poison.remove("state_ops");
    poison.remove("push_items");
    assertThat(broker.post("/streams/v1/cycle", poison).json().get("success").asBoolean()).isTrue();

    ObjectNode rest =
        Streams.cycle(id, messages.get(1), "dlq-last-out", "k", 2).put("release_lease", false);
    JsonNode r = broker.post("/streams/v1/cycle", rest).json();
    assertThat(r.get("ack_result").get("lease_released").asBoolean())
        .as("the whole batch is acked")
        .isTrue();
    assertThat(streams.committed(messages.get(0))).isEqualTo(2);
    assertThat(broker.get("/api/v1/pop/queue/dlq-last-src?consumerGroup=g1").status())
        .as("the dead-lettered message never comes back")
        .isEqualTo(204);
    // counted once each: the completed ack's prefix passes the dead letter, counted by its own
    String counts =
        "select coalesce(sum(m.acked), 0) * 10 + coalesce(sum(m.dead_lettered), 0)"
            + " from queen.queue_stats_minutes m join queen.queues q on q.id = m.queue_id"
            + " where q.name = 'dlq-last-src'";
    await().atMost(Duration.ofSeconds(20)).until(() -> broker.sqlLong(counts) == 21);
  }

  // the ack route and an expiry take such dead letters back; a cycle's release short of its batch
  // left them, and the message was processed again while it was a dead letter
  @Test
  void aCycleReleasingShortOfItsBatchTakesBackWhatItsLeaseDeadLettered() {
    String id = streams.register("q-release-dlq", "release-dlq-src");
    wire.pushNumbered("release-dlq-src", "p0", 0, 4);
    JsonNode messages = streams.pop("release-dlq-src", 4).get("messages");
    for (int poisoned : new int[] {1, 3}) {
      ObjectNode poison =
          Streams.cycle(id, messages.get(poisoned), "release-dlq-out", "k", 1)
              .put("release_lease", false);
      ((ObjectNode) poison.get("ack")).put("status", "dlq");
      poison.remove("state_ops");
      poison.remove("push_items");
      assertThat(broker.post("/streams/v1/cycle", poison).json().get("success").asBoolean())
          .isTrue();
    }
    assertThat(dead("release-dlq-src")).containsExactly(3, 1);

    JsonNode r =
        broker
            .post(
                "/streams/v1/cycle", Streams.cycle(id, messages.get(0), "release-dlq-out", "k", 2))
            .json();
    assertThat(r.get("ack_result").get("lease_released").asBoolean()).isTrue();
    assertThat(dead("release-dlq-src"))
        .as("1 is passed by the ack and stays; 3 goes out again with 2: no dead letter too")
        .containsExactly(1);
    assertThat(Wire.numbers(streams.pop("release-dlq-src", 10))).containsExactly(2, 3);
  }

  /** The numbers of a queue's dead letters, newest first. */
  private static List<Integer> dead(String queue) {
    List<Integer> ns = new ArrayList<>();
    for (JsonNode m : broker.get("/api/v1/dlq?queue=" + queue).json().get("messages")) {
      ns.add(m.get("data").get("n").asInt());
    }
    return ns;
  }

  @Test
  void aSinkPushOfAStoredTransactionIdIsADuplicateAndTheRestApplies() {
    String id = streams.register("q-dedup", "dedup-src");
    broker.post(
        "/api/v1/push", Wire.items(List.of(item("dedup-sink", "Default", "taken", object()))));
    wire.pushNumbered("dedup-src", "p0", 0, 1);
    JsonNode m = streams.pop("dedup-src", 1).get("messages").get(0);
    ObjectNode body = Streams.cycle(id, m, "dedup-sink", "k", 1);
    ((ArrayNode) body.get("push_items"))
        .removeAll()
        .add(item("dedup-sink", "Default", "taken", object()))
        .add(item("dedup-sink", "Default", "new", object()));
    JsonNode r = broker.post("/streams/v1/cycle", body).json();
    assertThat(r.get("success").asBoolean()).as(r.toString()).isTrue();
    assertThat(r.get("push_results").get(0).get("status").asText()).isEqualTo("duplicate");
    assertThat(r.get("push_results").get(1).get("status").asText()).isEqualTo("queued");
    assertThat(streams.sinkCount("dedup-sink")).isEqualTo(2);
  }

  @Test
  void aCyclesPushedPayloadKeepsEachDecimalsScale() {
    String id = streams.register("q-numbers", "numbers-src");
    wire.pushNumbered("numbers-src", "p0", 0, 1);
    JsonNode m = streams.pop("numbers-src", 1).get("messages").get(0);
    ObjectNode body = Streams.cycle(id, m, "numbers-out", "k", 1);
    ((ArrayNode) body.get("push_items")).removeAll();
    String payload = "{\"price\":1.0,\"qty\":2.50,\"rate\":1.000E+2,\"n\":100}";
    String raw =
        body.toString()
            .replace(
                "\"push_items\":[]",
                "\"push_items\":[{\"queue\":\"numbers-out\",\"partition\":\"Default\","
                    + "\"transactionId\":\"n1\",\"payload\":"
                    + payload
                    + "}]");
    JsonNode r = broker.post("/streams/v1/cycle", raw).json();
    assertThat(r.get("success").asBoolean()).as(r.toString()).isTrue();
    String popped = broker.get("/api/v1/pop/queue/numbers-out?batch=1").text();
    assertThat(popped)
        .as("a tree keeps each decimal's scale; an exponent is written out")
        .contains("{\"price\":1.0,\"qty\":2.50,\"rate\":100.0,\"n\":100}");
  }

  @Test
  void stateGoesWithItsQueue() {
    String id = streams.register("q-gone", "gone-src");
    wire.pushNumbered("gone-src", "p0", 0, 1);
    JsonNode m = streams.pop("gone-src", 1).get("messages").get(0);
    broker.post("/streams/v1/cycle", Streams.cycle(id, m, "gone-out", "k", 1));
    assertThat(
            broker.sqlLong("select count(*) from queen.stream_state where query_id = '" + id + "'"))
        .isEqualTo(1);
    assertThat(broker.delete("/api/v1/resources/queues/gone-src").status()).isEqualTo(200);
    assertThat(
            broker.sqlLong("select count(*) from queen.stream_state where query_id = '" + id + "'"))
        .isZero();
  }

  @Test
  void everyFieldTheRunnerGroupsByIsOnEachPoppedMessage() {
    wire.pushNumbered("fields-src", "p0", 0, 2);
    TestBroker.Reply r =
        broker.get(
            "/api/v1/pop/queue/fields-src?consumerGroup=runner&batch=2&wait=true&timeout=1000");
    for (JsonNode m : r.json().get("messages")) {
      for (String field :
          List.of("partitionId", "partition", "leaseId", "consumerGroup", "createdAt")) {
        assertThat(m.hasNonNull(field)).as(field).isTrue();
      }
      assertThat(m.get("consumerGroup").asText()).isEqualTo("runner");
    }
  }
}
