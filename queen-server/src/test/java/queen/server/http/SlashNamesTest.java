package queen.server.http;

import static org.assertj.core.api.Assertions.assertThat;
import static queen.server.Wire.object;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import queen.server.TestBroker;
import queen.server.Wire;

/**
 * Partitions, groups and transaction ids may hold a '/': a route's path names them with it encoded
 * (%2F), one segment each, and reaches them and nothing else.
 */
class SlashNamesTest {
  @RegisterExtension static final TestBroker broker = new TestBroker(Map.of());

  private final Wire wire = new Wire(broker);

  @Test
  void aGroupAndAPartitionHoldingASlashArePoppedSoughtAndDeletedByPath() {
    wire.pushNumbered("slash", "user/42", 0, 2);
    String group = "consumerGroup=team%2Fbilling";
    JsonNode first = wire.popPartition("slash", "user%2F42", group + "&batch=1").json();
    assertThat(first.get("partition").asText()).isEqualTo("user/42");
    assertThat(Wire.numbers(first)).containsExactly(0);
    wire.ackAll(first);

    JsonNode detail = broker.get("/api/v1/consumer-groups/team%2Fbilling").json();
    assertThat(detail.get("slash").get("partitions")).hasSize(1);

    TestBroker.Reply sought =
        broker.post(
            "/api/v1/consumer-groups/team%2Fbilling/queues/slash/partitions/user%2F42/seek", "{}");
    assertThat(sought.status()).isEqualTo(200);
    assertThat(sought.json().get("partitionName").asText()).isEqualTo("user/42");
    assertThat(wire.popPartition("slash", "user%2F42", group).status())
        .as("sought to the end: message 1 skipped")
        .isEqualTo(204);

    JsonNode deleted = broker.delete("/api/v1/consumer-groups/team%2Fbilling").json();
    assertThat(deleted.get("deletedPartitions").asInt()).isEqualTo(1);
    assertThat(Wire.numbers(wire.popPartition("slash", "user%2F42", group + "&batch=5").json()))
        .as("deleted, the group reads the partition from its start")
        .containsExactly(0, 1);
  }

  @Test
  void aDeadLetterWhoseTransactionIdHoldsASlashIsRequeuedByPath() {
    wire.configure("slash-dlq", object().put("retryLimit", 0));
    broker.post(
        "/api/v1/push",
        Wire.items(List.of(Wire.item("slash-dlq", "p", "order/7", object().put("n", 0)))));
    JsonNode batch = broker.get("/api/v1/pop/queue/slash-dlq?batch=1").json();
    wire.ackAll(batch, "failed", "x");
    String pid = batch.get("messages").get(0).get("partitionId").asText();

    TestBroker.Reply r = broker.post("/api/v1/messages/" + pid + "/order%2F7/retry", "{}");
    assertThat(r.status()).isEqualTo(200);
    assertThat(r.json().get("requeuedTransactionId").asText()).startsWith("order/7:requeued:");
    assertThat(broker.get("/api/v1/dlq?queue=slash-dlq").json().get("total").asInt()).isZero();
  }

  @Test
  void aGroupNamedLikeAnotherRoutesPathIsOnlyItself() {
    wire.pushNumbered("slashed", "p", 0, 1);
    assertThat(broker.get("/api/v1/pop/queue/slashed?consumerGroup=billing").status())
        .isEqualTo(200);
    // decoded whole, the path is that of billing's cursor on slashed
    JsonNode deleted = broker.delete("/api/v1/consumer-groups/billing%2Fqueues%2Fslashed").json();
    assertThat(deleted.get("consumerGroup").asText()).isEqualTo("billing/queues/slashed");
    assertThat(deleted.get("deletedPartitions").asInt()).isZero();
    assertThat(
            broker.sqlLong(
                "select count(*) from queen.log_consumers where consumer_group = 'billing'"))
        .isEqualTo(1);
  }
}
