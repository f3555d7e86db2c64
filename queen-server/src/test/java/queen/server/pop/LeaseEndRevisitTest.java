package queen.server.pop;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import queen.server.TestBroker;
import queen.server.Wire;

/**
 * A lease that ends without an ack offers its partition again at its end, through the revisit
 * wheel: before, only a reseed did, and on a wide queue a reseed reads a random page of the
 * partitions, which may miss it again and again. Reseeds here come once a minute, so a long-poll
 * parked before the lease ended is answered within its 20 s only by the wheel.
 */
class LeaseEndRevisitTest {
  @RegisterExtension
  static final TestBroker broker =
      new TestBroker(
          Map.of(
              "POP_WAIT_INITIAL_INTERVAL_MS", "60000",
              "POP_WAIT_MAX_INTERVAL_MS", "60000",
              "QUEEN_STATE_REFRESH_MS", "60000"));

  private final Wire wire = new Wire(broker);

  @Test
  void aParkedPopGetsTheBatchOfALeaseThatEndedWithoutAnAck() {
    wire.configure("lapse", Wire.object().put("leaseTime", 2));
    wire.pushNumbered("lapse", "p", 0, 1);
    JsonNode first = broker.get("/api/v1/pop/queue/lapse?batch=1").json();
    assertThat(Wire.numbers(first)).containsExactly(0);

    // the consumer died: no ack; this pop parks before the lease ends
    TestBroker.Reply again = broker.get("/api/v1/pop/queue/lapse?batch=1&wait=true&timeout=20000");
    assertThat(again.status())
        .as("redelivered at the lease's end, not after a reseed")
        .isEqualTo(200);
    assertThat(Wire.numbers(again.json())).containsExactly(0);
    assertThat(again.json().get("messages").get(0).get("transactionId").asText())
        .isEqualTo(first.get("messages").get(0).get("transactionId").asText());
  }
}
