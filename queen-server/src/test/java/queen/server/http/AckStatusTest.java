package queen.server.http;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;
import static queen.server.Wire.object;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import queen.server.Broker;
import queen.server.TestBroker;
import queen.server.Wire;

class AckStatusTest {
  /** No background database work to blur the count of calls per ack. */
  @RegisterExtension static final TestBroker broker = new TestBroker(TestBroker.QUIET_TIMERS);

  private final Wire wire = new Wire(broker);

  @Test
  void aFailedBatchChargesTheBudgetOnceAndIsRedeliveredWhole() {
    wire.configure("failed", object().put("retryLimit", 2));
    wire.pushNumbered("failed", "Default", 0, 3);
    JsonNode first = pop("failed", "batch=10");
    JsonNode acks = wire.ackAll(first, "failed", "boom");
    assertThat(acks.get(0).get("success").asBoolean()).isTrue();
    assertThat(acks.get(0).get("leaseReleased").asBoolean()).isTrue();
    for (int i = 1; i < 3; i++) {
      assertThat(acks.get(i).get("success").asBoolean()).isFalse();
      assertThat(acks.get(i).get("error").asText()).isEqualTo("Invalid or expired lease");
    }
    assertThat(cursor("failed", "retry_count")).as("charged once").isEqualTo(1);
    JsonNode again = pop("failed", "batch=10");
    assertThat(Wire.numbers(again)).containsExactly(0, 1, 2);
    assertThat(cursor("failed", "attempt_count")).isEqualTo(2);
  }

  @Test
  void pastTheRetryLimitMessagesGoToTheDeadLettersWithTheErrorText() {
    wire.configure("dead", object().put("retryLimit", 1));
    wire.pushNumbered("dead", "Default", 0, 2);
    wire.ackAll(pop("dead", "batch=10"), "failed", "first failure");
    JsonNode last = wire.ackAll(pop("dead", "batch=10"), "failed", "handler exploded");
    for (JsonNode a : last) {
      assertThat(a.get("success").asBoolean()).isTrue();
      assertThat(a.get("dlq").asBoolean()).isTrue();
    }
    assertThat(wire.popPartition("dead", "Default", "batch=10").status())
        .as("the cursor moved past them")
        .isEqualTo(204);
    JsonNode dlq = broker.get("/api/v1/dlq?queue=dead").json();
    assertThat(dlq.get("total").asInt()).isEqualTo(2);
    assertThat(dlq.get("messages")).hasSize(2);
    JsonNode newest = dlq.get("messages").get(0);
    assertThat(newest.get("errorMessage").asText()).isEqualTo("handler exploded");
    assertThat(newest.get("data").has("n")).isTrue();
    assertThat(newest.get("retryCount").asInt()).isEqualTo(1);
    assertThat(newest.get("queue").asText()).isEqualTo("dead");
    assertThat(newest.get("partition").asText()).isEqualTo("Default");
    assertThat(newest.get("consumerGroup").asText()).isEqualTo("__QUEUE_MODE__");
    assertThat(cursor("dead", "retry_count")).as("the failed range is done").isZero();
  }

  @Test
  void aMessageDeadLetteredInABatchGivenBackShortIsNotAlsoDeliveredAgain() {
    wire.configure("short", object().put("retryLimit", 3));
    wire.pushNumbered("short", "Default", 0, 3);
    JsonNode first = pop("short", "batch=10").get("messages");
    // out of order, in two requests: the second message dead-lettered, the third failed
    JsonNode dead = ackBatch(Wire.ack(first.get(1), "dlq", "poison")).get(0);
    assertThat(dead.get("dlq").asBoolean()).isTrue();
    assertThat(
            ackBatch(Wire.ack(first.get(2), "failed", "x")).get(0).get("leaseReleased").asBoolean())
        .isTrue();
    assertThat(broker.get("/api/v1/dlq?queue=short").json().get("total").asInt())
        .as("given back with the batch, not also a dead letter")
        .isZero();
    JsonNode again = pop("short", "batch=10");
    assertThat(Wire.numbers(again)).containsExactly(0, 1, 2);

    // in one request: the dead-lettered one learns that its batch went back
    JsonNode m = again.get("messages");
    JsonNode both =
        ackBatch(Wire.ack(m.get(1), "dlq", "poison"), Wire.ack(m.get(2), "failed", "x"));
    assertThat(both.get(0).get("success").asBoolean()).isFalse();
    assertThat(both.get(0).get("dlq").asBoolean()).isFalse();
    assertThat(both.get(0).get("error").asText())
        .isEqualTo("The batch was released and will be redelivered");
    assertThat(broker.get("/api/v1/dlq?queue=short").json().get("total").asInt()).isZero();

    // a lease-less dlq ack before the leased one: its dead letter is written after the release
    JsonNode third = pop("short", "batch=10").get("messages");
    ObjectNode leaseless = Wire.ack(third.get(1), "dlq", "poison");
    leaseless.remove("leaseId");
    JsonNode mixed = ackBatch(leaseless, Wire.ack(third.get(2), "failed", "x"));
    assertThat(mixed.get(0).get("dlq").asBoolean()).isFalse();
    assertThat(broker.get("/api/v1/dlq?queue=short").json().get("total").asInt()).isZero();

    JsonNode last = pop("short", "batch=10");
    assertThat(Wire.numbers(last)).containsExactly(0, 1, 2);
    JsonNode inOrder =
        ackBatch(
            Wire.ack(last.get("messages").get(0), "completed", null),
            Wire.ack(last.get("messages").get(1), "dlq", "poison"),
            Wire.ack(last.get("messages").get(2), "completed", null));
    assertThat(inOrder.get(1).get("dlq").asBoolean()).isTrue();
    assertThat(broker.get("/api/v1/dlq?queue=short").json().get("total").asInt())
        .as("dead-lettered once the cursor passes it")
        .isEqualTo(1);
    assertThat(wire.popPartition("short", "Default", "batch=10").status()).isEqualTo(204);
  }

  @Test
  void aMessageDeadLetteredInALeaseThatExpiresIsNotAlsoDeliveredAgain() {
    // 3 s: long enough for the dlq ack to land inside the lease, short enough to wait out
    wire.configure("lapsed", object().put("retryLimit", 3).put("leaseTime", 3));
    wire.pushNumbered("lapsed", "Default", 0, 3);
    JsonNode first = pop("lapsed", "batch=10").get("messages");
    assertThat(ackBatch(Wire.ack(first.get(1), "dlq", "poison")).get(0).get("dlq").asBoolean())
        .isTrue();
    JsonNode again = afterExpiry("batch=10");
    assertThat(Wire.numbers(again))
        .as("the expired lease's batch goes out again whole")
        .containsExactly(0, 1, 2);
    assertThat(broker.get("/api/v1/dlq?queue=lapsed").json().get("total").asInt())
        .as("redelivered, so no dead letter too")
        .isZero();

    // an autoAck pop after the expiry delivers it too: no dead letter either
    JsonNode m = again.get("messages");
    assertThat(ackBatch(Wire.ack(m.get(2), "dlq", "poison")).get(0).get("dlq").asBoolean())
        .isTrue();
    assertThat(Wire.numbers(afterExpiry("batch=10&autoAck=true"))).containsExactly(0, 1, 2);
    assertThat(broker.get("/api/v1/dlq?queue=lapsed").json().get("total").asInt()).isZero();
  }

  private JsonNode afterExpiry(String query) {
    AtomicReference<TestBroker.Reply> delivered = new AtomicReference<>();
    await()
        .atMost(Duration.ofSeconds(20))
        .until(
            () ->
                delivered.updateAndGet(r -> wire.popPartition("lapsed", "Default", query)).status()
                    == 200);
    return delivered.get().json();
  }

  private JsonNode ackBatch(ObjectNode... acks) {
    ObjectNode body = object();
    body.putArray("acknowledgments").addAll(List.of(acks));
    return broker.post("/api/v1/ack/batch", body).json();
  }

  // [dlq, completed, dlq] of one message answered all three, committed it and counted two dead
  // letters (helper-141)
  @Test
  void aMessageNamedTwiceInOneAckIsDecidedByItsFirstItem() {
    wire.configure("twice", object().put("retryLimit", 3));
    wire.pushNumbered("twice", "Default", 0, 2);
    JsonNode m = pop("twice", "batch=10").get("messages");
    JsonNode answers =
        ackBatch(
            Wire.ack(m.get(0), "dlq", "poison"),
            Wire.ack(m.get(0), "completed", null),
            Wire.ack(m.get(0), "dlq", "poison"),
            Wire.ack(m.get(1), "success", null),
            Wire.ack(m.get(1), "completed", null));
    assertThat(answers.get(0).path("dlq").asBoolean()).isTrue();
    assertThat(answers.get(1).get("success").asBoolean()).isFalse();
    assertThat(answers.get(1).get("error").asText()).contains("earlier item");
    assertThat(answers.get(2).get("success").asBoolean()).as("the same status again").isTrue();
    assertThat(answers.get(2).path("dlq").asBoolean()).as("one dead letter, once").isFalse();
    assertThat(answers.get(4).get("success").asBoolean()).as("success is completed").isTrue();
    assertThat(broker.get("/api/v1/dlq?queue=twice").json().get("total").asInt()).isEqualTo(1);
    assertThat(wire.popPartition("twice", "Default", "batch=10").status()).isEqualTo(204);
  }

  // the repeat answered success while the first item was turned back by the release (helper-143)
  @Test
  void aRepeatOfADeadLetteringAckThatTheBatchsReleaseTurnsBackIsTurnedBackToo() {
    wire.configure("again", object().put("retryLimit", 3));
    wire.pushNumbered("again", "Default", 0, 3);
    JsonNode m = pop("again", "batch=10").get("messages");
    JsonNode answers =
        ackBatch(
            Wire.ack(m.get(1), "dlq", "poison"),
            Wire.ack(m.get(1), "dlq", "poison"),
            Wire.ack(m.get(2), "failed", "x"));
    for (int i = 0; i < 2; i++) {
      assertThat(answers.get(i).get("success").asBoolean()).as("item " + i).isFalse();
      assertThat(answers.get(i).get("error").asText()).contains("released");
    }
    assertThat(broker.get("/api/v1/dlq?queue=again").json().get("total").asInt()).isZero();
    assertThat(Wire.numbers(pop("again", "batch=10"))).containsExactly(0, 1, 2);
  }

  @Test
  void aFailedRangeThatAnAutoAckPopTookSpendsNoBudgetOfLaterMessages() {
    wire.configure("spent", object().put("retryLimit", 1));
    wire.pushNumbered("spent", "Default", 0, 2);
    wire.ackAll(pop("spent", "batch=10"), "failed", "x");
    assertThat(cursor("spent", "retry_count")).isEqualTo(1);
    assertThat(Wire.numbers(pop("spent", "batch=10&autoAck=true"))).containsExactly(0, 1);
    wire.pushNumbered("spent", "Default", 2, 1);
    JsonNode later = pop("spent", "batch=10");
    assertThat(Wire.numbers(later)).containsExactly(2);
    JsonNode failed = wire.ackAll(later, "failed", "y").get(0);
    assertThat(failed.get("dlq").asBoolean()).as("its first failure, with a retry left").isFalse();
    assertThat(Wire.numbers(pop("spent", "batch=10"))).containsExactly(2);
  }

  @Test
  void retryReleasesWithoutChargingAndDlqIsImmediate() {
    wire.pushNumbered("statuses", "Default", 0, 2);
    JsonNode first = pop("statuses", "batch=1");
    assertThat(wire.ackAll(first, "retry", null).get(0).get("leaseReleased").asBoolean()).isTrue();
    assertThat(cursor("statuses", "retry_count")).isZero();
    JsonNode again = pop("statuses", "batch=1");
    assertThat(Wire.numbers(again)).containsExactly(0);
    JsonNode dlq = wire.ackAll(again, "dlq", null).get(0);
    assertThat(dlq.get("dlq").asBoolean()).isTrue();
    assertThat(Wire.numbers(pop("statuses", "batch=1"))).containsExactly(1);
    assertThat(broker.get("/api/v1/dlq?queue=statuses").json().get("total").asInt()).isEqualTo(1);
  }

  @Test
  void inEachModeAFailedMessageKMakesTheRestRefusedAndTheBatchComesBackFromK() {
    wire.pushNumbered("each", "Default", 0, 5);
    JsonNode batch = pop("each", "batch=5");
    List<String> statuses = List.of("completed", "completed", "failed", "completed", "completed");
    JsonNode[] answers = new JsonNode[5];
    for (int k = 0; k < 5; k++) {
      answers[k] =
          broker
              .post("/api/v1/ack", Wire.ack(batch.get("messages").get(k), statuses.get(k), "x"))
              .json()
              .get(0);
    }
    assertThat(answers[2].get("success").asBoolean()).isTrue();
    assertThat(answers[2].get("leaseReleased").asBoolean()).isTrue();
    assertThat(answers[3].get("error").asText()).isEqualTo("Invalid or expired lease");
    assertThat(answers[4].get("error").asText()).isEqualTo("Invalid or expired lease");
    assertThat(Wire.numbers(pop("each", "batch=5"))).containsExactly(2, 3, 4);
  }

  @Test
  void aBatchThatFailsTwiceSucceedsOnTheThirdDeliveryWithRetryLimit3() {
    wire.configure("thrice", object().put("retryLimit", 3));
    wire.pushNumbered("thrice", "Default", 0, 100);
    wire.ackAll(pop("thrice", "batch=100"), "failed", "one");
    wire.ackAll(pop("thrice", "batch=100"), "failed", "two");
    JsonNode third = pop("thrice", "batch=100");
    assertThat(third.get("messages")).hasSize(100);
    assertThat(wire.ackAll(third)).allMatch(a -> a.get("success").asBoolean());
    assertThat(broker.get("/api/v1/dlq?queue=thrice").json().get("total").asInt()).isZero();
    assertThat(cursor("thrice", "committed")).isEqualTo(99);
    assertThat(cursor("thrice", "retry_count")).isZero();
  }

  @Test
  void messagesPushedAfterAFailureDoNotJoinTheRetriedBatch() {
    wire.configure("capped", object().put("retryLimit", 1));
    wire.pushNumbered("capped", "Default", 0, 3);
    wire.ackAll(pop("capped", "batch=10"), "failed", "x");
    wire.pushNumbered("capped", "Default", 3, 3);
    JsonNode retried = pop("capped", "batch=10");
    assertThat(Wire.numbers(retried)).containsExactly(0, 1, 2);
    wire.ackAll(retried, "failed", "x");
    assertThat(broker.get("/api/v1/dlq?queue=capped").json().get("total").asInt()).isEqualTo(3);
    JsonNode fresh = pop("capped", "batch=10");
    assertThat(Wire.numbers(fresh)).containsExactly(3, 4, 5);
    assertThat(cursor("capped", "attempt_count")).isEqualTo(1);
  }

  @Test
  void extendingALeaseKeepsTheBatchPastItsOriginalExpiry() {
    // 3 s: the extend must land within the lease, whatever a loaded machine stalls between calls
    wire.configure("extend", object().put("leaseTime", 3));
    wire.pushNumbered("extend", "Default", 0, 2);
    JsonNode batch = pop("extend", "batch=10");
    String lease = batch.get("leaseId").asText();
    JsonNode ext = broker.post("/api/v1/lease/" + lease + "/extend", "{\"seconds\":30}").json();
    assertThat(ext.get(0).get("success").asBoolean()).isTrue();
    assertThat(ext.get(0).get("leaseId").asText()).isEqualTo(lease);
    assertThat(ext.get(0).get("expiresAt").asText()).endsWith("Z");
    // Queen's Python client sends no body at all: the default 60 s
    JsonNode bare = broker.post("/api/v1/lease/" + lease + "/extend", "").json();
    assertThat(bare.get(0).get("success").asBoolean()).as(bare.toString()).isTrue();
    await()
        .atMost(Duration.ofSeconds(10))
        .until(
            () ->
                broker.sqlLong(
                        "select (now() > lease_acquired_at + interval '3.5 seconds')::int from"
                            + " queen.log_consumers c join queen.log_partitions p on p.id ="
                            + " c.partition_id join queen.queues q on q.id = p.queue_id where"
                            + " q.name = 'extend'")
                    == 1);
    assertThat(wire.popPartition("extend", "Default", "batch=10").status()).isEqualTo(204);
    assertThat(wire.ackAll(batch)).allMatch(a -> a.get("success").asBoolean());
  }

  @Test
  void extendingAnUnknownLeaseSaysSoInsideA200() {
    TestBroker.Reply r =
        broker.post("/api/v1/lease/01a2362e-71a6-7dd8-9474-408c77ed37cd/extend", "{}");
    assertThat(r.status()).isEqualTo(200);
    assertThat(r.json().get(0).get("success").asBoolean()).isFalse();
    assertThat(r.json().get(0).get("error").asText()).isEqualTo("Lease not found");
    assertThat(broker.post("/api/v1/lease/x/extend", "[]").status()).isEqualTo(400);
    assertThat(broker.post("/api/v1/lease/x/extend", "{\"seconds\":-1}").status()).isEqualTo(400);
  }

  @Test
  void aWholeBatchAckIsOneDatabaseCall() {
    wire.pushNumbered("fast-ack", "Default", 0, 50);
    JsonNode batch = pop("fast-ack", "batch=50");
    long before = broker.dbCalls();
    JsonNode acks = wire.ackAll(batch);
    assertThat(broker.dbCalls() - before).as("the registry's positional advance").isEqualTo(1);
    assertThat(acks)
        .allMatch(a -> a.get("success").asBoolean() && a.get("leaseReleased").asBoolean());
    assertThat(acks.get(0).get("queueName").asText()).isEqualTo("fast-ack");
    assertThat(cursor("fast-ack", "committed")).isEqualTo(49);
  }

  @Test
  void anAckArrivingAtASecondBrokerWorks() {
    wire.pushNumbered("two-brokers", "Default", 0, 3);
    JsonNode batch = pop("two-brokers", "batch=10");
    try (Broker other = broker.startAnother()) {
      ObjectNode body = object().put("consumerGroup", "__QUEUE_MODE__");
      var acks = body.putArray("acknowledgments");
      batch.get("messages").forEach(m -> acks.add(Wire.ack(m, "completed", null)));
      JsonNode answer = broker.post(other, "/api/v1/ack/batch", body).json();
      assertThat(answer).allMatch(a -> a.get("success").asBoolean());
    }
    assertThat(cursor("two-brokers", "committed")).isEqualTo(2);
  }

  @Test
  void aLeaseOfSeveralPartitionsIsExtendedThroughABrokerThatDidNotIssueIt() {
    for (int p = 0; p < 4; p++) {
      wire.pushNumbered("extend-wide", "p" + p, 0, 1);
    }
    JsonNode batch = broker.get("/api/v1/pop/queue/extend-wide?batch=10&partitions=4").json();
    String lease = batch.get("leaseId").asText();
    String rows = "select count(*) from queen.log_consumers where worker_id = '" + lease + "' and ";
    long leased = broker.sqlLong(rows + "lease_expires_at > now()");
    assertThat(leased).as("partitions under the one lease").isGreaterThan(1);
    try (Broker other = broker.startAnother()) {
      // unknown to that broker: it finds the rows by the lease, partition by partition
      TestBroker.Reply ext =
          broker.post(other, "/api/v1/lease/" + lease + "/extend", object().put("seconds", 600));
      assertThat(ext.json().get(0).get("success").asBoolean()).isTrue();
    }
    assertThat(broker.sqlLong(rows + "lease_expires_at > now() + interval '500 seconds'"))
        .as("every partition's lease extended")
        .isEqualTo(leased);
    assertThat(wire.ackAll(batch)).allMatch(a -> a.get("success").asBoolean());
  }

  @Test
  void aDeadLetterCanBeRequeuedIntoItsPartition() {
    wire.configure("requeue", object().put("retryLimit", 0));
    wire.pushNumbered("requeue", "Default", 0, 1);
    JsonNode batch = pop("requeue", "batch=1");
    wire.ackAll(batch, "failed", "x");
    JsonNode m = batch.get("messages").get(0);
    String path =
        "/api/v1/messages/"
            + m.get("partitionId").asText()
            + "/"
            + m.get("transactionId").asText()
            + "/retry";
    TestBroker.Reply r = broker.post(path, "{}");
    assertThat(r.status()).isEqualTo(200);
    String copy = r.json().get("requeuedTransactionId").asText();
    assertThat(copy).startsWith(m.get("transactionId").asText() + ":requeued:");
    assertThat(broker.get("/api/v1/dlq?queue=requeue").json().get("total").asInt()).isZero();
    JsonNode back = pop("requeue", "batch=1");
    assertThat(back.get("messages").get(0).get("transactionId").asText())
        .as("a copy under its own transactionId: the original still names the original offset")
        .isEqualTo(copy);
    assertThat(Wire.numbers(back)).containsExactly(0);
    assertThat(wire.ackAll(back).get(0).get("success").asBoolean()).isTrue();
    assertThat(broker.post(path, "{}").status()).as("no dead letter left").isEqualTo(404);
  }

  @Test
  void theDeadLetterListFiltersAndPages() {
    wire.configure("dlq-list", object().put("retryLimit", 0));
    wire.pushNumbered("dlq-list", "a", 0, 3);
    wire.pushNumbered("dlq-list", "b", 0, 2);
    wire.ackAll(wire.popPartition("dlq-list", "a", "batch=10").json(), "failed", "a-err");
    wire.ackAll(wire.popPartition("dlq-list", "b", "batch=10").json(), "failed", "b-err");
    JsonNode page = broker.get("/api/v1/dlq?queue=dlq-list&limit=2&offset=1").json();
    assertThat(page.get("total").asInt()).isEqualTo(5);
    assertThat(page.get("messages")).hasSize(2);
    assertThat(page.get("pagination").get("limit").asInt()).isEqualTo(2);
    JsonNode onlyB = broker.get("/api/v1/dlq?queue=dlq-list&partition=b").json();
    assertThat(onlyB.get("total").asInt()).isEqualTo(2);
    assertThat(onlyB.get("messages").get(0).get("errorMessage").asText()).isEqualTo("b-err");
    assertThat(
            broker
                .get("/api/v1/dlq?queue=dlq-list&from=2999-01-01T00:00:00Z")
                .json()
                .get("total")
                .asInt())
        .isZero();
    assertThat(broker.get("/api/v1/dlq?from=yesterday").status()).isEqualTo(400);
  }

  private JsonNode pop(String queue, String query) {
    TestBroker.Reply r = wire.popPartition(queue, "Default", query);
    assertThat(r.status()).as("pop %s %s", queue, query).isEqualTo(200);
    return r.json();
  }

  private long cursor(String queue, String column) {
    return broker.sqlLong(
        "select "
            + column
            + " from queen.log_consumers c join queen.log_partitions p on p.id = c.partition_id"
            + " join queen.queues q on q.id = p.queue_id where q.name = '"
            + queue
            + "' and c.consumer_group = '__QUEUE_MODE__'");
  }
}
