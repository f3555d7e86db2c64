package queen.server.store;

import static org.assertj.core.api.Assertions.assertThat;
import static queen.server.Wire.item;
import static queen.server.Wire.object;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import queen.server.TestBroker;
import queen.server.Wire;

/**
 * The transactionId index is keyed by a 64-bit hash. Here every transaction id starting with
 * "clash-" hashes to 42 (the test replaces queen.txn_hash in its own database before the first
 * push): a collision must never make a new message a duplicate, nor an ack land on another message.
 */
class HashCollisionTest {
  @RegisterExtension static final TestBroker broker = new TestBroker();

  private final Wire wire = new Wire(broker);

  @BeforeAll
  static void everyClashHashesAlike() {
    broker.sql(
        "create or replace function queen.txn_hash(p_transaction_id text) returns bigint"
            + " language sql immutable parallel safe as $$ select case when p_transaction_id"
            + " like 'clash-%' then 42 else hashtextextended(p_transaction_id, 0) end $$");
  }

  @Test
  void aNewTransactionIdWhoseHashIsStoredIsQueuedAndARealRepeatIsADuplicate() {
    JsonNode a = push("pushes", "clash-a").get(0);
    JsonNode b = push("pushes", "clash-b").get(0);
    assertThat(b.get("status").asText()).as("a collision, not a duplicate").isEqualTo("queued");

    JsonNode again = push("pushes", "clash-a").get(0);
    assertThat(again.get("status").asText()).isEqualTo("duplicate");
    assertThat(again.get("message_id").asText()).isEqualTo(a.get("message_id").asText());

    JsonNode mixed = push("pushes", "clash-c", "clash-b");
    assertThat(mixed.get(0).get("status").asText()).isEqualTo("queued");
    assertThat(mixed.get(1).get("status").asText()).isEqualTo("duplicate");
    assertThat(mixed.get(1).get("message_id").asText()).isEqualTo(b.get("message_id").asText());

    JsonNode popped = wire.popPartition("pushes", "p", "batch=10").json();
    List<String> txns = new ArrayList<>();
    popped.get("messages").forEach(m -> txns.add(m.get("transactionId").asText()));
    assertThat(txns).containsExactly("clash-a", "clash-b", "clash-c");
  }

  @Test
  void acksByTransactionIdFindTheirOwnMessageAmongCollisions() {
    push("acks", "clash-x", "clash-y", "clash-z");
    JsonNode popped = wire.popPartition("acks", "p", "batch=10&consumerGroup=g").json();
    String pid = popped.get("messages").get(0).get("partitionId").asText();

    // no lease: each ack is resolved by transaction id alone, and three messages share its hash
    assertThat(ack("g", pid, "clash-y", null).get("success").asBoolean()).isTrue();
    assertThat(committed("acks", "g")).as("y is acked ahead of the cursor").isEqualTo(-1);
    assertThat(ack("g", pid, "clash-x", null).get("success").asBoolean()).isTrue();
    assertThat(committed("acks", "g")).as("x then y").isEqualTo(1);
    String lease = popped.get("leaseId").asText();
    assertThat(ack("g", pid, "clash-z", lease).get("success").asBoolean()).isTrue();
    assertThat(committed("acks", "g")).isEqualTo(2);
  }

  @Test
  void aTransactionRefusesARealRepeatButAppliesACollision() {
    push("tx", "clash-t");
    assertThat(transactionPush("tx", "clash-t").get("success").asBoolean()).isFalse();
    JsonNode applied = transactionPush("tx", "clash-u");
    assertThat(applied.get("success").asBoolean()).isTrue();
    assertThat(
            broker.sqlLong(
                "select sum(s.msg_count) from queen.log_segments s join queen.log_partitions p"
                    + " on p.id = s.partition_id join queen.queues q on q.id = p.queue_id"
                    + " where q.name = 'tx'"))
        .isEqualTo(2);
  }

  private JsonNode push(String queue, String... txns) {
    List<ObjectNode> items = new ArrayList<>();
    for (String t : txns) {
      items.add(item(queue, "p", t, object().put("t", t)));
    }
    TestBroker.Reply r = broker.post("/api/v1/push", Wire.items(items));
    assertThat(r.status()).as("201 when stored, 200 when all were duplicates").isIn(200, 201);
    return r.json();
  }

  private JsonNode ack(String group, String partitionId, String txn, String lease) {
    ObjectNode body =
        object()
            .put("transactionId", txn)
            .put("partitionId", partitionId)
            .put("status", "completed")
            .put("consumerGroup", group);
    if (lease != null) {
      body.put("leaseId", lease);
    }
    return broker.post("/api/v1/ack", body).json().get(0);
  }

  private JsonNode transactionPush(String queue, String txn) {
    ObjectNode body = object();
    ArrayNode ops = body.putArray("operations");
    ops.addObject().put("type", "push").putArray("items").add(item(queue, "p", txn, object()));
    return broker.post("/api/v1/transaction", body).json();
  }

  private long committed(String queue, String group) {
    return broker.sqlLong(
        "select c.committed from queen.log_consumers c join queen.log_partitions p on p.id ="
            + " c.partition_id join queen.queues q on q.id = p.queue_id where q.name = '"
            + queue
            + "' and c.consumer_group = '"
            + group
            + "'");
  }
}
