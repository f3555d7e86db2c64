package queen.server.http;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Instant;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import queen.server.TestBroker;
import queen.server.Wire;

/** The filters of the message and dead-letter lists, as Queen's clients and CLI send them. */
class ListFilterTest {
  @RegisterExtension static final TestBroker broker = new TestBroker();

  @Test
  void aFromAfterToIsRefusedOnBothListsNotAnsweredWithAnEmptyPage() {
    for (String list : List.of("/api/v1/messages", "/api/v1/dlq")) {
      TestBroker.Reply r = broker.get(list + "?from=2026-02-01&to=2026-01-01");
      assertThat(r.status()).as(list).isEqualTo(400);
      assertThat(r.json().get("error").asText()).as(list).isEqualTo("from must not be after to");
      assertThat(broker.get(list + "?from=2026-01-01T00:00:00Z&to=2026-01-01T00:00:00Z").status())
          .as(list + ", an instant")
          .isEqualTo(200);
      assertThat(broker.get(list + "?from=2100-01-01").status())
          .as(list + ", a from after the default to")
          .isEqualTo(200);
    }
  }

  @Test
  void statusFailedListsTheDeadLettersAsQueensGoCliAsksForThem() {
    Wire wire = new Wire(broker);
    wire.configure("failing", Wire.object().put("retryLimit", 0));
    wire.pushNumbered("failing", "Default", 0, 3);
    wire.ackAll(wire.popPartition("failing", "Default", "batch=1").json(), "failed", "boom");
    wire.ackAll(wire.popPartition("failing", "Default", "batch=1").json());
    assertThat(wire.messageIds("/api/v1/messages?queue=failing&status=dead_letter"))
        .containsExactly("failing-Default-0");
    assertThat(wire.messageIds("/api/v1/messages?queue=failing&status=failed"))
        .containsExactly("failing-Default-0");
    TestBroker.Reply unknown = broker.get("/api/v1/messages?queue=failing&status=lost");
    assertThat(unknown.status()).isEqualTo(400);
    assertThat(unknown.json().get("error").asText()).contains("status must be one of");
  }

  @Test
  void aToAloneListsTheHourBeforeIt() {
    new Wire(broker).pushNumbered("hour-before", "Default", 0, 1);
    Instant now = Instant.now();
    String list = "/api/v1/messages?queue=hour-before&to=";
    assertThat(new Wire(broker).messageIds(list + now.plusSeconds(1_800)))
        .containsExactly("hour-before-Default-0");
    assertThat(new Wire(broker).messageIds(list + now.plusSeconds(3 * 3_600)))
        .as("the hour before to, not the hour before now")
        .isEmpty();
  }
}
