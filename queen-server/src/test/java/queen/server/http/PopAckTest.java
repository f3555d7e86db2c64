package queen.server.http;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;
import static queen.server.Wire.object;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicReference;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import queen.server.TestBroker;
import queen.server.Wire;

class PopAckTest {
  @RegisterExtension static final TestBroker broker = new TestBroker();
  private final Wire wire = new Wire(broker);

  @Test
  void thousandMessagesPopInOrderAcrossSeveralPopsWithAcks() {
    for (int from = 0; from < 1000; from += 100) {
      wire.pushNumbered("ordered", "Default", from, 100);
    }
    List<Integer> seen = new ArrayList<>();
    int pops = 0;
    while (true) {
      TestBroker.Reply r = wire.popPartition("ordered", "Default", "batch=150");
      if (r.status() == 204) {
        break;
      }
      assertThat(r.status()).isEqualTo(200);
      pops++;
      seen.addAll(Wire.numbers(r.json()));
      JsonNode acks = wire.ackAll(r.json());
      assertThat(acks).allMatch(a -> a.get("success").asBoolean());
    }
    assertThat(seen).isEqualTo(IntStream.range(0, 1000).boxed().toList());
    assertThat(pops).isEqualTo(7);
    assertThat(broker.sqlLong(cursorOf("ordered", "__QUEUE_MODE__", "committed"))).isEqualTo(999);
  }

  @Test
  void popAnswerCarriesEveryFieldOfTheWireContract() {
    String trace = "5f0e8a0c-8a5e-4b8e-9c1c-0e7f2f4a7b11";
    broker.post(
        "/api/v1/push",
        Wire.items(
            List.of(
                Wire.item("fields", "p1", "txn-1", object().put("hello", "wörld"))
                    .put("traceId", trace))));
    TestBroker.Reply r = wire.popPartition("fields", "p1", "batch=5&consumerGroup=g1");
    assertThat(r.status()).isEqualTo(200);
    assertThat(r.headers().firstValue("content-type")).hasValue("application/json");
    JsonNode body = r.json();
    assertThat(body.get("success").asBoolean()).isTrue();
    assertThat(body.get("queue").asText()).isEqualTo("fields");
    assertThat(body.get("partition").asText()).isEqualTo("p1");
    assertThat(body.get("consumerGroup").asText()).isEqualTo("g1");
    assertThat(body.get("partitionsClaimed").asInt()).isEqualTo(1);
    String leaseId = body.get("leaseId").asText();
    assertThat(UUID.fromString(leaseId).version()).as("leaseId is a UUIDv7").isEqualTo(7);
    JsonNode m = body.get("messages").get(0);
    assertThat(UUID.fromString(m.get("id").asText()).version()).isEqualTo(7);
    assertThat(m.get("transactionId").asText()).isEqualTo("txn-1");
    assertThat(m.get("partitionId").asText())
        .isEqualTo(body.get("partitionId").asText())
        .isNotEmpty();
    assertThat(m.get("partition").asText()).isEqualTo("p1");
    assertThat(m.get("queue").asText()).isEqualTo("fields");
    assertThat(m.get("leaseId").asText()).isEqualTo(leaseId);
    assertThat(m.get("consumerGroup").asText()).isEqualTo("g1");
    assertThat(m.get("data").get("hello").asText()).isEqualTo("wörld");
    assertThat(m.get("traceId").asText()).isEqualTo(trace);
    assertThat(m.get("producerSub").isNull()).isTrue();
    assertThat(m.get("createdAt").asText())
        .matches("\\d{4}-\\d\\d-\\d\\dT\\d\\d:\\d\\d:\\d\\d\\.\\d{6}Z");
  }

  @Test
  void defaultBatchIs200() {
    wire.pushNumbered("defaults", "Default", 0, 100);
    wire.pushNumbered("defaults", "Default", 100, 150);
    JsonNode r = broker.get("/api/v1/pop/queue/defaults/partition/Default").json();
    assertThat(r.get("messages")).hasSize(200);
    assertThat(Wire.numbers(r)).isEqualTo(IntStream.range(0, 200).boxed().toList());
  }

  @Test
  void aBatchStartsMidSegmentAndEndsMidSegment() {
    wire.pushNumbered("slices", "Default", 0, 10);
    wire.pushNumbered("slices", "Default", 10, 10);
    JsonNode a = wire.popPartition("slices", "Default", "batch=7&autoAck=true").json();
    JsonNode b = wire.popPartition("slices", "Default", "batch=7&autoAck=true").json();
    JsonNode c = wire.popPartition("slices", "Default", "batch=7&autoAck=true").json();
    assertThat(Wire.numbers(a)).containsExactly(0, 1, 2, 3, 4, 5, 6);
    assertThat(Wire.numbers(b)).containsExactly(7, 8, 9, 10, 11, 12, 13);
    assertThat(Wire.numbers(c)).containsExactly(14, 15, 16, 17, 18, 19);
  }

  @Test
  void aLeasedBatchIsHiddenFromOthersUntilItExpiresThenRedelivered() {
    wire.configure("leases", object().put("leaseTime", 1));
    wire.pushNumbered("leases", "Default", 0, 3);
    TestBroker.Reply first = wire.popPartition("leases", "Default", "batch=10");
    assertThat(Wire.numbers(first.json())).containsExactly(0, 1, 2);
    assertThat(wire.popPartition("leases", "Default", "batch=10").status())
        .as("the lease holds the partition")
        .isEqualTo(204);
    assertThat(broker.sqlLong(cursorOf("leases", "__QUEUE_MODE__", "attempt_count"))).isEqualTo(1);

    TestBroker.Reply again =
        await()
            .atMost(Duration.ofSeconds(10))
            .pollInterval(Duration.ofMillis(100))
            .until(
                () -> wire.popPartition("leases", "Default", "batch=10"), r -> r.status() == 200);
    assertThat(Wire.numbers(again.json())).containsExactly(0, 1, 2);
    assertThat(again.json().get("leaseId").asText())
        .isNotEqualTo(first.json().get("leaseId").asText());
    assertThat(broker.sqlLong(cursorOf("leases", "__QUEUE_MODE__", "attempt_count")))
        .as("redelivery from the same offset counts as a new attempt")
        .isEqualTo(2);
    assertThat(broker.sqlLong(cursorOf("leases", "__QUEUE_MODE__", "retry_count")))
        .as("lease expiry never charges the retry budget")
        .isZero();
    assertThat(broker.sqlLong(cursorOf("leases", "__QUEUE_MODE__", "committed"))).isEqualTo(-1);
  }

  @Test
  void autoAckAdvancesTheCursorWithoutALease() {
    wire.pushNumbered("auto", "Default", 0, 5);
    JsonNode r = wire.popPartition("auto", "Default", "batch=3&autoAck=true").json();
    assertThat(Wire.numbers(r)).containsExactly(0, 1, 2);
    assertThat(r.get("leaseId").asText()).isEmpty();
    assertThat(r.get("messages").get(0).get("leaseId").asText()).isEmpty();
    assertThat(broker.sqlLong(cursorOf("auto", "__QUEUE_MODE__", "committed"))).isEqualTo(2);
    assertThat(broker.sqlLong(cursorOf("auto", "__QUEUE_MODE__", "(worker_id is null)::int")))
        .isEqualTo(1);
    JsonNode next = wire.popPartition("auto", "Default", "batch=3&autoAck=1").json();
    assertThat(Wire.numbers(next)).containsExactly(3, 4);
  }

  @Test
  void consumerGroupsReadIndependently() {
    wire.pushNumbered("fanout", "Default", 0, 4);
    JsonNode a = wire.popPartition("fanout", "Default", "consumerGroup=a&autoAck=true").json();
    JsonNode b = wire.popPartition("fanout", "Default", "consumerGroup=b&autoAck=true").json();
    assertThat(Wire.numbers(a)).containsExactly(0, 1, 2, 3);
    assertThat(Wire.numbers(b)).containsExactly(0, 1, 2, 3);
  }

  @Test
  void anAckWithAStaleLeaseChangesNothing() {
    wire.pushNumbered("stale", "Default", 0, 2);
    JsonNode pop = wire.popPartition("stale", "Default", "batch=2").json();
    JsonNode m = pop.get("messages").get(0);
    for (String lease : List.of(UUID.randomUUID().toString(), "not-a-uuid")) {
      JsonNode ack = ackOne(m, lease, "__QUEUE_MODE__").json();
      assertThat(ack).hasSize(1);
      assertThat(ack.get(0).get("success").asBoolean()).isFalse();
      assertThat(ack.get(0).get("error").asText()).isEqualTo("Invalid or expired lease");
    }
    assertThat(broker.sqlLong(cursorOf("stale", "__QUEUE_MODE__", "committed"))).isEqualTo(-1);
    assertThat(broker.sqlLong(cursorOf("stale", "__QUEUE_MODE__", "(worker_id is not null)::int")))
        .isEqualTo(1);

    JsonNode good = ackOne(m, pop.get("leaseId").asText(), "__QUEUE_MODE__").json().get(0);
    assertThat(good.get("success").asBoolean()).isTrue();
    assertThat(good.get("leaseReleased").asBoolean()).as("one of two acked").isFalse();
    assertThat(broker.sqlLong(cursorOf("stale", "__QUEUE_MODE__", "committed"))).isZero();
  }

  @Test
  void anAckOnAnExpiredLeaseChangesNothing() {
    wire.configure("expired", object().put("leaseTime", 1));
    wire.pushNumbered("expired", "Default", 0, 1);
    JsonNode pop = wire.popPartition("expired", "Default", "batch=1").json();
    await()
        .atMost(Duration.ofSeconds(5))
        .until(
            () ->
                broker.sqlLong(
                        cursorOf("expired", "__QUEUE_MODE__", "(lease_expires_at < now())::int"))
                    == 1);
    JsonNode ack =
        ackOne(pop.get("messages").get(0), pop.get("leaseId").asText(), "__QUEUE_MODE__").json();
    assertThat(ack.get(0).get("success").asBoolean()).isFalse();
    assertThat(ack.get(0).get("error").asText()).isEqualTo("Invalid or expired lease");
    assertThat(broker.sqlLong(cursorOf("expired", "__QUEUE_MODE__", "committed"))).isEqualTo(-1);
  }

  @Test
  void aRetriedAckWhoseFirstAnswerWasLostSucceedsAndChangesNothing() {
    wire.pushNumbered("retried", "Default", 0, 3);
    JsonNode pop = wire.popPartition("retried", "Default", "batch=2").json();
    String lease = pop.get("leaseId").asText();
    JsonNode first = wire.ackAll(pop);
    assertThat(first.get(1).get("leaseReleased").asBoolean()).isTrue();
    // the client never saw that answer (its broker died) and sends the same acks again
    JsonNode again = wire.ackAll(pop);
    for (JsonNode a : again) {
      assertThat(a.get("success").asBoolean()).as(a.toString()).isTrue();
    }
    assertThat(broker.sqlLong(cursorOf("retried", "__QUEUE_MODE__", "committed"))).isEqualTo(1);
    // what the released lease never committed stays refused: the batch rule of WIRE section 8
    JsonNode next = wire.popPartition("retried", "Default", "batch=1").json();
    JsonNode stale = ackOne(next.get("messages").get(0), lease, "__QUEUE_MODE__").json().get(0);
    assertThat(stale.get("error").asText()).isEqualTo("Invalid or expired lease");
    assertThat(broker.sqlLong(cursorOf("retried", "__QUEUE_MODE__", "committed"))).isEqualTo(1);
  }

  @Test
  void aLateAckFromAnExpiredLeaseIsRefusedWhenAnotherLeaseProcessedTheMessage() {
    wire.configure("late", object().put("leaseTime", 1));
    wire.pushNumbered("late", "Default", 0, 2);
    JsonNode first = wire.popPartition("late", "Default", "batch=2").json();
    // the first consumer stalls past its lease; a second one gets the batch and processes it
    AtomicReference<JsonNode> redelivered = new AtomicReference<>();
    await()
        .atMost(Duration.ofSeconds(10))
        .until(
            () -> {
              TestBroker.Reply r = wire.popPartition("late", "Default", "batch=2");
              redelivered.set(r.status() == 200 ? r.json() : null);
              return redelivered.get() != null;
            });
    JsonNode second = redelivered.get();
    assertThat(second.get("messages")).hasSize(2);
    for (JsonNode a : wire.ackAll(second)) {
      assertThat(a.get("success").asBoolean()).isTrue();
    }
    // one message, one success: the stalled consumer must not be told it processed them too
    for (JsonNode a : wire.ackAll(first)) {
      assertThat(a.get("success").asBoolean()).as(a.toString()).isFalse();
      assertThat(a.get("error").asText()).isEqualTo("Invalid or expired lease");
    }
    assertThat(broker.sqlLong(cursorOf("late", "__QUEUE_MODE__", "committed"))).isEqualTo(1);
  }

  @Test
  void anAckFromALeaseReleasedByRetryIsRefusedForWhatTheNextLeaseAcked() {
    wire.pushNumbered("reacked", "Default", 0, 3);
    JsonNode first = wire.popPartition("reacked", "Default", "batch=3").json();
    String firstLease = first.get("leaseId").asText();
    // the first consumer gives the batch back; the next one acks two of its three messages
    JsonNode back = ackOne(first.get("messages").get(0), firstLease, null, "retry").json();
    assertThat(back.get(0).get("leaseReleased").asBoolean()).isTrue();
    JsonNode second = wire.popPartition("reacked", "Default", "batch=3").json();
    String secondLease = second.get("leaseId").asText();
    for (int i = 0; i < 2; i++) {
      JsonNode ok = ackOne(second.get("messages").get(i), secondLease, null).json();
      assertThat(ok.get(0).get("success").asBoolean()).isTrue();
    }
    // the first lease released the cursor at -1: what the second acked since is not its to ack
    JsonNode late = ackOne(first.get("messages").get(1), firstLease, null).json().get(0);
    assertThat(late.get("success").asBoolean()).as(late.toString()).isFalse();
    assertThat(late.get("error").asText()).isEqualTo("Invalid or expired lease");
  }

  @Test
  void theLeaseDecidesTheGroupOfAnAckThatNamesNone() {
    wire.pushNumbered("leasegroup", "Default", 0, 1);
    JsonNode pop = wire.popPartition("leasegroup", "Default", "consumerGroup=workers").json();
    JsonNode ack = ackOne(pop.get("messages").get(0), pop.get("leaseId").asText(), null).json();
    assertThat(ack.get(0).get("success").asBoolean()).isTrue();
    assertThat(ack.get(0).get("leaseReleased").asBoolean()).isTrue();
    assertThat(broker.sqlLong(cursorOf("leasegroup", "workers", "committed"))).isZero();
  }

  @Test
  void partialAcksAdvanceOverTheContiguousPrefixOnly() {
    wire.pushNumbered("prefix", "Default", 0, 4);
    JsonNode pop = wire.popPartition("prefix", "Default", "batch=4").json();
    String lease = pop.get("leaseId").asText();
    JsonNode msgs = pop.get("messages");
    ackOne(msgs.get(2), lease, null);
    assertThat(broker.sqlLong(cursorOf("prefix", "__QUEUE_MODE__", "committed"))).isEqualTo(-1);
    ackOne(msgs.get(0), lease, null);
    assertThat(broker.sqlLong(cursorOf("prefix", "__QUEUE_MODE__", "committed"))).isZero();
    ackOne(msgs.get(1), lease, null);
    assertThat(broker.sqlLong(cursorOf("prefix", "__QUEUE_MODE__", "committed"))).isEqualTo(2);
    JsonNode last = ackOne(msgs.get(3), lease, null).json().get(0);
    assertThat(last.get("leaseReleased").asBoolean()).isTrue();
    assertThat(broker.sqlLong(cursorOf("prefix", "__QUEUE_MODE__", "committed"))).isEqualTo(3);
    assertThat(broker.sqlLong(cursorOf("prefix", "__QUEUE_MODE__", "(worker_id is null)::int")))
        .isEqualTo(1);
  }

  @Test
  void anAckOfAnAlreadyCommittedMessageNeverMovesTheCursorBack() {
    wire.pushNumbered("noback", "Default", 0, 3);
    JsonNode first = wire.popPartition("noback", "Default", "batch=3").json();
    wire.ackAll(first);
    JsonNode again = ackOne(first.get("messages").get(0), null, null).json().get(0);
    assertThat(again.get("success").asBoolean()).isTrue();
    assertThat(broker.sqlLong(cursorOf("noback", "__QUEUE_MODE__", "committed"))).isEqualTo(2);
  }

  @Test
  void aLeaselessAckCommitsTheCursorUpToTheMessage() {
    wire.pushNumbered("leaseless", "Default", 0, 3);
    JsonNode pop = wire.popPartition("leaseless", "Default", "batch=3").json();
    for (JsonNode m : pop.get("messages")) {
      assertThat(ackOne(m, null, null).json().get(0).get("success").asBoolean()).isTrue();
    }
    assertThat(broker.sqlLong(cursorOf("leaseless", "__QUEUE_MODE__", "committed"))).isEqualTo(2);
    assertThat(broker.sqlLong(cursorOf("leaseless", "__QUEUE_MODE__", "(worker_id is null)::int")))
        .as("the whole leased batch acked releases the lease")
        .isEqualTo(1);
  }

  @Test
  void outsideALeaseOnlyTheNextMessageMovesTheCursor() {
    wire.configure("next-only", object().put("leaseTime", 1));
    wire.pushNumbered("next-only", "Default", 0, 3);
    JsonNode pop = wire.popPartition("next-only", "Default", "batch=3").json();
    await()
        .atMost(Duration.ofSeconds(5))
        .until(
            () ->
                broker.sqlLong(
                        cursorOf("next-only", "__QUEUE_MODE__", "(lease_expires_at < now())::int"))
                    == 1);
    JsonNode later = ackOne(pop.get("messages").get(2), null, null).json().get(0);
    assertThat(later.get("success").asBoolean()).isFalse();
    assertThat(later.get("error").asText()).contains("next one");
    assertThat(broker.sqlLong(cursorOf("next-only", "__QUEUE_MODE__", "committed"))).isEqualTo(-1);
    assertThat(
            ackOne(pop.get("messages").get(0), null, null).json().get(0).get("success").asBoolean())
        .isTrue();
    assertThat(broker.sqlLong(cursorOf("next-only", "__QUEUE_MODE__", "committed"))).isZero();
  }

  @Test
  void aNulCharacterInANameIsA400() {
    assertBad("/api/v1/push", "{\"items\":[{\"queue\":\"a\\u0000b\"}]}", "control characters");
    TestBroker.Reply pop = broker.get("/api/v1/pop/queue/q?consumerGroup=%00");
    assertThat(pop.status()).isEqualTo(400);
    assertThat(pop.json().get("error").asText()).contains("consumerGroup");
  }

  @Test
  void ackOfAnUnknownMessageFailsInsideA200() {
    wire.pushNumbered("unknown", "Default", 0, 1);
    JsonNode pop = wire.popPartition("unknown", "Default", "batch=1").json();
    ObjectNode ack =
        object()
            .put("transactionId", "never-pushed")
            .put("partitionId", pop.get("partitionId").asText());
    TestBroker.Reply r = broker.post("/api/v1/ack", ack);
    assertThat(r.status()).isEqualTo(200);
    assertThat(r.json().get(0).get("success").asBoolean()).isFalse();
    assertThat(r.json().get(0).get("error").asText()).isEqualTo("Message not found");
  }

  @Test
  void nothingToDeliverIs204WithNoBody() {
    wire.pushNumbered("empty", "Default", 0, 1);
    wire.popPartition("empty", "Default", "autoAck=true");
    for (String path :
        List.of(
            "/api/v1/pop/queue/empty/partition/Default",
            "/api/v1/pop/queue/no-such-queue/partition/Default",
            "/api/v1/pop/queue/empty/partition/no-such-partition")) {
      TestBroker.Reply r = broker.get(path);
      assertThat(r.status()).as(path).isEqualTo(204);
      assertThat(r.text()).isEmpty();
    }
  }

  @Test
  void badAcksAre400sAndChangeNothing() {
    wire.pushNumbered("badack", "Default", 0, 1);
    JsonNode pop = wire.popPartition("badack", "Default", "batch=1").json();
    String pid = pop.get("partitionId").asText();
    assertBad("/api/v1/ack", "", "Empty request body");
    assertBad("/api/v1/ack", "{\"partitionId\":\"" + pid + "\"}", "transactionId is required");
    assertBad("/api/v1/ack", "{\"transactionId\":\"t\"}", "partitionId is required");
    assertBad(
        "/api/v1/ack",
        "{\"transactionId\":\"t\",\"partitionId\":\"x\"}",
        "partitionId must be a UUID");
    assertBad(
        "/api/v1/ack",
        "{\"transactionId\":\"t\",\"partitionId\":\"" + pid + "\",\"status\":3}",
        "status must be a string");
    assertBad("/api/v1/ack/batch", "{}", "acknowledgments array is required");
    assertBad(
        "/api/v1/ack/batch",
        "{\"acknowledgments\":[{\"transactionId\":1,\"partitionId\":\"" + pid + "\"}]}",
        "valid transactionId string");
    assertBad(
        "/api/v1/ack/batch",
        "{\"acknowledgments\":[{\"transactionId\":\"t\"}]}",
        "valid partitionId string");
    assertThat(broker.sqlLong(cursorOf("badack", "__QUEUE_MODE__", "committed"))).isEqualTo(-1);
    assertThat(broker.post("/api/v1/ack/batch", "{\"acknowledgments\":[]}").json()).isEmpty();
  }

  @Test
  void aSubscriptionFromThatIsNotATimestampIsA400() {
    TestBroker.Reply r =
        wire.popPartition("anything", "Default", "consumerGroup=g&subscriptionFrom=yesterday");
    assertThat(r.status()).isEqualTo(400);
    assertThat(r.json().get("error").asText()).contains("subscriptionFrom");
  }

  private void assertBad(String path, String body, String message) {
    TestBroker.Reply r = broker.post(path, body);
    assertThat(r.status()).as(body).isEqualTo(400);
    assertThat(r.json().get("error").asText()).as(body).contains(message);
  }

  private TestBroker.Reply ackOne(JsonNode message, String leaseId, String group) {
    return ackOne(message, leaseId, group, "completed");
  }

  private TestBroker.Reply ackOne(JsonNode message, String leaseId, String group, String status) {
    ObjectNode ack =
        object()
            .put("transactionId", message.get("transactionId").asText())
            .put("partitionId", message.get("partitionId").asText())
            .put("status", status);
    if (leaseId != null) {
      ack.put("leaseId", leaseId);
    }
    if (group != null) {
      ack.put("consumerGroup", group);
    }
    return broker.post("/api/v1/ack", ack);
  }

  /** A column of the cursor row of (queue's only partition, group). */
  private static String cursorOf(String queue, String group, String column) {
    return "select "
        + column
        + " from queen.log_consumers c join queen.log_partitions p on p.id = c.partition_id"
        + " join queen.queues q on q.id = p.queue_id where q.name = '"
        + queue
        + "' and c.consumer_group = '"
        + group
        + "'";
  }
}
