package queen.server.http;

import static org.assertj.core.api.Assertions.assertThat;
import static queen.server.Wire.object;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import queen.server.TestBroker;
import queen.server.Wire;

class TransactionTest {
  @RegisterExtension static final TestBroker broker = new TestBroker();
  private final Wire wire = new Wire(broker);

  @Test
  void acksAndPushesCommitTogetherAndAreVisibleAtOnce() {
    wire.pushNumbered("tx-in", "Default", 0, 1);
    JsonNode popped = wire.popPartition("tx-in", "Default", "batch=1").json();
    JsonNode m = popped.get("messages").get(0);
    ObjectNode body = object();
    ArrayNode ops = body.putArray("operations");
    ack(ops, m);
    ops.addObject().put("type", "push").putArray("items").add(item("tx-out", "derived-1"));
    body.putArray("requiredLeases").add(popped.get("leaseId").asText());

    JsonNode r = broker.post("/api/v1/transaction", body).json();
    assertThat(r.get("success").asBoolean()).isTrue();
    assertThat(r.get("transactionId").asText()).isNotEmpty();
    JsonNode results = r.get("results");
    assertThat(results.get(0).get("type").asText()).isEqualTo("ack");
    assertThat(results.get(0).get("index").asInt()).isZero();
    assertThat(results.get(1).get("type").asText()).isEqualTo("push");
    assertThat(results.get(1).get("index").asInt()).isEqualTo(1);
    assertThat(results.get(1).get("queueName").asText()).isEqualTo("tx-out");
    assertThat(results.get(1).get("messageId").asText()).isNotEmpty();

    assertThat(wire.popPartition("tx-in", "Default", "batch=1").status()).isEqualTo(204);
    JsonNode out = wire.popPartition("tx-out", "Default", "batch=1").json();
    assertThat(out.get("messages").get(0).get("data").get("v").asText()).isEqualTo("derived-1");
  }

  @Test
  void aTransactionAckingWhatAnAutoAckPopConsumedForwardsAsQueensDefaultConsumeDoes() {
    // Queen's JS consume() pops with autoAck=true by default, and its documented pipeline acks
    // and pushes in a transaction inside the handler: the ack is of a consumed message
    wire.pushNumbered("tx-auto", "Default", 0, 1);
    JsonNode m =
        wire.popPartition("tx-auto", "Default", "batch=1&autoAck=true")
            .json()
            .get("messages")
            .get(0);
    ObjectNode body = object();
    ArrayNode ops = body.putArray("operations");
    ack(ops, m);
    ops.addObject()
        .put("type", "push")
        .putArray("items")
        .addObject()
        .put("queue", "tx-auto-out")
        .putObject("data")
        .put("n", 0);
    assertThat(broker.post("/api/v1/transaction", body).json().get("success").asBoolean()).isTrue();
    assertThat(broker.sqlLong(messages("tx-auto-out"))).isEqualTo(1);
  }

  @Test
  void acksThatEndALeaseOutsideTheFastPathLeaveNothingInTheAckRegistry() {
    // each lease's batch, with every transactionId, was remembered for 15 minutes
    double before = broker.metric("queen_ack_registry_partitions", "");
    wire.pushNumbered("tx-reg", "Default", 0, 3);
    JsonNode first = wire.popPartition("tx-reg", "Default", "batch=3").json();
    assertThat(broker.metric("queen_ack_registry_partitions", "")).isEqualTo(before + 1);
    for (JsonNode m : first.get("messages")) {
      // one message at a time, as Queen's clients ack: the general path
      TestBroker.Reply r = wire.ackOne(m, first.get("leaseId").asText(), null);
      assertThat(r.json().get(0).get("success").asBoolean()).as(r.text()).isTrue();
    }
    assertThat(broker.metric("queen_ack_registry_partitions", "")).isEqualTo(before);

    wire.pushNumbered("tx-reg", "Default", 3, 2);
    JsonNode second = wire.popPartition("tx-reg", "Default", "batch=2").json();
    assertThat(broker.metric("queen_ack_registry_partitions", "")).isEqualTo(before + 1);
    ObjectNode body = object();
    ArrayNode ops = body.putArray("operations");
    for (JsonNode m : second.get("messages")) {
      // no leaseId, as Queen's TransactionBuilder sends
      ops.addObject()
          .put("type", "ack")
          .put("transactionId", m.get("transactionId").asText())
          .put("partitionId", m.get("partitionId").asText())
          .put("status", "completed");
    }
    ops.addObject().put("type", "push").putArray("items").add(item("tx-reg-out", "next"));
    assertThat(broker.post("/api/v1/transaction", body).json().get("success").asBoolean()).isTrue();
    assertThat(broker.metric("queen_ack_registry_partitions", "")).isEqualTo(before);
  }

  @Test
  void anAckNamingNoGroupIsTheAckOfTheOneRequiredLeaseWhoseGroupDecides() {
    // Queen's clients send the message's lease in requiredLeases only, and its group only when
    // the caller repeats it: a consumer of a named group had every such transaction refused
    wire.pushNumbered("tx-group", "Default", 0, 2);
    JsonNode popped = wire.popPartition("tx-group", "Default", "batch=1&consumerGroup=g").json();
    JsonNode r =
        broker
            .post("/api/v1/transaction", forwardUnderLease(popped, null, "tx-group-out", "g-1"))
            .json();
    assertThat(r.get("success").asBoolean()).as(r.toString()).isTrue();
    assertThat(broker.sqlLong(Wire.cursorOf("tx-group", "g", "committed")))
        .as("group g's cursor moved past its message")
        .isZero();
    assertThat(Wire.numbers(wire.popPartition("tx-group", "Default", "batch=10").json()))
        .as("queue mode untouched")
        .containsExactly(0, 1);

    // the lease has ended with its batch: the same ack again is refused, and nothing is pushed
    ObjectNode again = forwardUnderLease(popped, null, "tx-group-out", "g-2");
    JsonNode refused = broker.post("/api/v1/transaction", again).json();
    assertThat(refused.get("success").asBoolean()).as(refused.toString()).isFalse();
    assertThat(wire.popPartition("tx-group-out", "Default", "batch=10").json().get("messages"))
        .extracting(m -> m.get("transactionId").asText())
        .containsExactly("g-1");
  }

  @Test
  void anAckNamingItsGroupIsCheckedUnderTheOneRequiredLease() {
    // lease-less, a consumer whose lease had expired forwarded the message a second time, beside
    // the consumer that took it over: one input, two outputs
    wire.configure("tx-stale", object().put("leaseTime", 1));
    wire.pushNumbered("tx-stale", "Default", 0, 1);
    JsonNode stale = wire.popPartition("tx-stale", "Default", "batch=1&consumerGroup=g").json();
    // the next lease outlives whatever a loaded machine stalls before the transactions land
    wire.configure("tx-stale", object().put("leaseTime", 30));
    // parks until the first lease ends, and takes the message over
    JsonNode live =
        wire.popPartition("tx-stale", "Default", "batch=1&consumerGroup=g&wait=true&timeout=10000")
            .json();
    assertThat(Wire.numbers(live)).containsExactly(0);

    JsonNode refused =
        broker
            .post(
                "/api/v1/transaction", forwardUnderLease(stale, "g", "tx-stale-out", "from-stale"))
            .json();
    assertThat(refused.get("success").asBoolean()).as(refused.toString()).isFalse();
    JsonNode applied =
        broker
            .post("/api/v1/transaction", forwardUnderLease(live, "g", "tx-stale-out", "from-live"))
            .json();
    assertThat(applied.get("success").asBoolean()).as(applied.toString()).isTrue();
    assertThat(wire.popPartition("tx-stale-out", "Default", "batch=10").json().get("messages"))
        .extracting(m -> m.get("transactionId").asText())
        .containsExactly("from-live");
  }

  // checked under the leased message's lease, the autoAck pop's message was refused
  @Test
  void aGroupsAckOfAMessageTheRequiredLeaseNeverHeldStaysLeaseless() {
    wire.pushNumbered("tx-mixed", "a", 0, 1);
    wire.pushNumbered("tx-mixed", "b", 0, 1);
    JsonNode auto =
        wire.popPartition("tx-mixed", "a", "batch=1&consumerGroup=g&autoAck=true").json();
    JsonNode leased = wire.popPartition("tx-mixed", "b", "batch=1&consumerGroup=g").json();
    ObjectNode body = object();
    ArrayNode ops = body.putArray("operations");
    ack(ops, auto.get("messages").get(0));
    ack(ops, leased.get("messages").get(0));
    ops.forEach(op -> ((ObjectNode) op).put("consumerGroup", "g"));
    ops.addObject().put("type", "push").putArray("items").add(item("tx-mixed-out", "both"));
    body.putArray("requiredLeases").add(leased.get("leaseId").asText());
    JsonNode r = broker.post("/api/v1/transaction", body).json();
    assertThat(r.get("success").asBoolean()).as(r.toString()).isTrue();
    assertThat(wire.popPartition("tx-mixed", "b", "batch=1&consumerGroup=g").status())
        .as("the leased message acked under its lease")
        .isEqualTo(204);
  }

  @Test
  void requiredLeasesThatNameNoLeaseAreIgnoredAsTheyWere() {
    wire.pushNumbered("tx-odd", "Default", 0, 3);
    JsonNode messages = wire.popPartition("tx-odd", "Default", "batch=3&autoAck=true").json();
    int n = 0;
    for (String odd : List.of("[\"not-a-lease\"]", "\"x\"", "[null]")) {
      ObjectNode body = object();
      ack(body.putArray("operations"), messages.get("messages").get(n++));
      String text = body.toString().replaceFirst("}$", ",\"requiredLeases\":" + odd + "}");
      JsonNode r = broker.post("/api/v1/transaction", text).json();
      assertThat(r.get("success").asBoolean()).as(odd + ": " + r).isTrue();
    }
  }

  @Test
  void aPushOfAStoredTransactionIdAppliesNothing() {
    wire.pushNumbered("tx-dup-in", "Default", 0, 1);
    broker.post("/api/v1/push", Wire.items(java.util.List.of(item("tx-dup-out", "taken"))));
    JsonNode m = wire.popPartition("tx-dup-in", "Default", "batch=1").json().get("messages").get(0);
    ObjectNode body = object();
    ArrayNode ops = body.putArray("operations");
    ops.addObject()
        .put("type", "ack")
        .put("transactionId", m.get("transactionId").asText())
        .put("partitionId", m.get("partitionId").asText());
    ops.addObject().put("type", "push").putArray("items").add(item("tx-dup-out", "taken"));

    JsonNode r = broker.post("/api/v1/transaction", body).json();
    assertThat(r.get("success").asBoolean()).isFalse();
    assertThat(r.get("error").asText()).contains("already stored");
    assertThat(committed("tx-dup-in")).as("the ack was rolled back").isEqualTo(-1);
    assertThat(broker.sqlLong(messages("tx-dup-out"))).isEqualTo(1);
  }

  @Test
  void anAckOfAnUnknownMessageAppliesNothing() {
    wire.pushNumbered("tx-unknown", "Default", 0, 1);
    JsonNode m =
        wire.popPartition("tx-unknown", "Default", "batch=1").json().get("messages").get(0);
    ObjectNode body = object();
    ArrayNode ops = body.putArray("operations");
    ops.addObject().put("type", "push").putArray("items").add(item("tx-unknown-out", "never"));
    ops.addObject()
        .put("type", "ack")
        .put("transactionId", "no-such-message")
        .put("partitionId", m.get("partitionId").asText());
    JsonNode r = broker.post("/api/v1/transaction", body).json();
    assertThat(r.get("success").asBoolean()).isFalse();
    assertThat(r.get("error").asText()).isEqualTo("ACK operation failed: Message not found");
    assertThat(broker.sqlLong(messages("tx-unknown-out"))).isZero();
  }

  @Test
  void aFailedAckInsideATransactionDeadLettersAtOnce() {
    wire.pushNumbered("tx-failed", "Default", 0, 2);
    JsonNode m = wire.popPartition("tx-failed", "Default", "batch=1").json().get("messages").get(0);
    ObjectNode body = object();
    body.putArray("operations")
        .addObject()
        .put("type", "ack")
        .put("transactionId", m.get("transactionId").asText())
        .put("partitionId", m.get("partitionId").asText())
        .put("status", "failed")
        .put("error", "bad input");
    JsonNode r = broker.post("/api/v1/transaction", body).json();
    assertThat(r.get("success").asBoolean()).isTrue();
    assertThat(r.get("results").get(0).get("dlq").asBoolean()).isTrue();
    JsonNode dlq = broker.get("/api/v1/dlq?queue=tx-failed").json();
    assertThat(dlq.get("messages").get(0).get("errorMessage").asText()).isEqualTo("bad input");
    assertThat(Wire.numbers(wire.popPartition("tx-failed", "Default", "batch=5").json()))
        .containsExactly(1);
  }

  @Test
  void badRequestsAre400sAndUnknownOperationsFailInsideA200() {
    assertThat(broker.post("/api/v1/transaction", "{}").status()).isEqualTo(400);
    assertThat(
            broker.post("/api/v1/transaction", "{\"operations\":[]}").json().get("error").asText())
        .isEqualTo("operations array cannot be empty");
    TestBroker.Reply unknown =
        broker.post("/api/v1/transaction", "{\"operations\":[{\"type\":\"teleport\"}]}");
    assertThat(unknown.status()).isEqualTo(200);
    assertThat(unknown.json().get("success").asBoolean()).isFalse();
    assertThat(unknown.json().get("error").asText()).isEqualTo("Unknown operation type: teleport");
  }

  @Test
  void resultsComeInTheOrderOfTheOperations() {
    wire.pushNumbered("tx-order", "Default", 0, 1);
    JsonNode m = wire.popPartition("tx-order", "Default", "batch=1").json().get("messages").get(0);
    ObjectNode body = object();
    ArrayNode ops = body.putArray("operations");
    ops.addObject().put("type", "push").putArray("items").add(item("tx-order-out", "o-1"));
    ack(ops, m);
    JsonNode results = broker.post("/api/v1/transaction", body).json().get("results");
    assertThat(results).extracting(r -> r.get("type").asText()).containsExactly("push", "ack");
    assertThat(results).extracting(r -> r.get("index").asInt()).containsExactly(0, 1);
  }

  @Test
  void anAckNamingAGroupOrTransactionIdNoRouteCouldCreateIsA400() {
    wire.pushNumbered("tx-names", "Default", 0, 1);
    JsonNode m = wire.popPartition("tx-names", "Default", "batch=1").json().get("messages").get(0);
    String ack =
        "{\"operations\":[{\"type\":\"ack\",\"partitionId\":\""
            + m.get("partitionId").asText()
            + "\",\"transactionId\":\"%s\",\"consumerGroup\":\"%s\"}]}";
    String txn = m.get("transactionId").asText();
    // JSON escapes: a control character, and a lone surrogate PostgreSQL would store as '?'
    for (String[] bad :
        new String[][] {
          {"consumerGroup", ack.formatted(txn, "\\u0001g")},
          {"transactionId", ack.formatted("\\ud800", "g")},
          {"status must be a string", ack.formatted(txn, "g").replace("}]}", ",\"status\":5}]}")},
          {"leaseId must be a string", ack.formatted(txn, "").replace("}]}", ",\"leaseId\":[]}]}")}
        }) {
      TestBroker.Reply r = broker.post("/api/v1/transaction", bad[1]);
      assertThat(r.status()).as(bad[1]).isEqualTo(400);
      assertThat(r.json().get("error").asText()).contains(bad[0] + " (operations[0])");
    }
  }

  @Test
  void aPushedPayloadKeepsItsNumbersAsWritten() {
    String payload =
        "{\"amount\":12345678901234567.89,\"tiny\":0.30000000000000000001,\"huge\":1e400,"
            + "\"int\":123456789012345678901234567890}";
    String body =
        "{\"operations\":[{\"type\":\"push\",\"items\":[{\"queue\":\"tx-exact\","
            + "\"transactionId\":\"e1\",\"payload\":"
            + payload
            + "},{\"queue\":\"tx-exact\",\"transactionId\":\"e2\",\"data\":2.50}]}]}";
    assertThat(broker.post("/api/v1/transaction", body).json().get("success").asBoolean()).isTrue();
    String popped = wire.popPartition("tx-exact", "Default", "batch=2").text();
    assertThat(popped).contains("\"data\":" + payload, "\"data\":2.50");
  }

  /**
   * A transaction as Queen's clients send it: the popped message's ack, with no lease and the group
   * only when the caller names one (null: none), a push to {@code out}, and the pop's lease in
   * requiredLeases.
   */
  private static ObjectNode forwardUnderLease(
      JsonNode popped, String group, String out, String pushed) {
    ObjectNode body = object();
    ArrayNode ops = body.putArray("operations");
    ack(ops, popped.get("messages").get(0));
    if (group != null) {
      ((ObjectNode) ops.get(0)).put("consumerGroup", group);
    }
    ops.addObject().put("type", "push").putArray("items").add(item(out, pushed));
    body.putArray("requiredLeases").add(popped.get("leaseId").asText());
    return body;
  }

  /** An ack operation of a popped message, as Queen's TransactionBuilder sends it. */
  private static void ack(ArrayNode ops, JsonNode m) {
    ops.addObject()
        .put("type", "ack")
        .put("transactionId", m.get("transactionId").asText())
        .put("partitionId", m.get("partitionId").asText())
        .put("status", "completed");
  }

  private static ObjectNode item(String queue, String txn) {
    ObjectNode i = object().put("queue", queue).put("transactionId", txn);
    i.putObject("data").put("v", txn);
    return i;
  }

  private long committed(String queue) {
    return broker.sqlLong(
        "select c.committed from queen.log_consumers c join queen.log_partitions p on p.id ="
            + " c.partition_id join queen.queues q on q.id = p.queue_id where q.name = '"
            + queue
            + "'");
  }

  /** Messages stored in the queue's partitions. */
  private static String messages(String queue) {
    return "select coalesce(sum(s.msg_count), 0) from queen.log_segments s join"
        + " queen.log_partitions p on p.id = s.partition_id join queen.queues q on q.id ="
        + " p.queue_id where q.name = '"
        + queue
        + "'";
  }
}
