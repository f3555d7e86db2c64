package queen.server.http;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import queen.server.TestBroker;
import queen.server.Wire;

/** {@code DELETE /api/v1/queues/:name/clear}: messages go, offsets and cursors stay right. */
class QueueClearTest {
  @RegisterExtension static final TestBroker broker = new TestBroker();
  private final Wire wire = new Wire(broker);

  @Test
  void aClearedPartitionDeliversOnlyWhatIsPushedAfter() {
    wire.pushNumbered("clr", "a", 0, 4);
    wire.pushNumbered("clr", "b", 0, 3);
    JsonNode r = broker.delete("/api/v1/queues/clr/clear?partition=a").json();
    assertThat(r.get("partitionsCleared").asInt()).isEqualTo(1);
    assertThat(r.get("messagesDeleted").asInt()).isEqualTo(4);
    assertThat(wire.popPartition("clr", "a", "autoAck=true").status()).isEqualTo(204);
    assertThat(Wire.numbers(wire.popPartition("clr", "b", "autoAck=true").json()))
        .containsExactly(0, 1, 2);

    wire.pushNumbered("clr", "a", 4, 2);
    JsonNode after = wire.popPartition("clr", "a", "autoAck=true").json();
    assertThat(Wire.numbers(after)).containsExactly(4, 5);

    JsonNode all = broker.delete("/api/v1/queues/clr/clear").json();
    assertThat(all.get("partitionsCleared").asInt()).isEqualTo(2);
    assertThat(broker.sqlLong("select count(*) from queen.log_segments")).isZero();
    assertThat(broker.delete("/api/v1/queues/none/clear").status()).isEqualTo(404);
    assertThat(broker.delete("/api/v1/queues/clr/clear?partition=zz").status()).isEqualTo(404);
  }

  @Test
  void anAckOfALeaseWhoseWholeBatchAClearDeletedReleasesItForWhatIsPushedNext() {
    wire.configure("clr-leased", Wire.object().put("leaseTime", 120));
    wire.pushNumbered("clr-leased", "a", 0, 2);
    JsonNode popped = wire.popPartition("clr-leased", "a", "batch=10&consumerGroup=g").json();
    assertThat(popped.get("messages")).hasSize(2);
    assertThat(broker.delete("/api/v1/queues/clr-leased/clear").status()).isEqualTo(200);

    JsonNode first = popped.get("messages").get(0);
    TestBroker.Reply acked = wire.ackOne(first, first.get("leaseId").asText(), "g");
    assertThat(acked.text()).contains("Message not found");
    wire.pushNumbered("clr-leased", "a", 2, 1);
    TestBroker.Reply next = wire.popPartition("clr-leased", "a", "batch=10&consumerGroup=g");
    assertThat(next.status())
        .as("the lease held nothing left to ack: it ended at the ack, not 120 s later")
        .isEqualTo(200);
    assertThat(Wire.numbers(next.json())).containsExactly(2);
  }
}
