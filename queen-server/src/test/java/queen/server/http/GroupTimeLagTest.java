package queen.server.http;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import java.time.Duration;
import java.util.Map;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import queen.server.TestBroker;
import queen.server.Wire;

/**
 * A group's time lag in its detail: from the lag snapshot for the cursors it holds, probed for the
 * others. The snapshot is taken once here (an hour's interval), so which cursors it holds is known.
 */
class GroupTimeLagTest {
  @RegisterExtension
  static final TestBroker broker = new TestBroker(Map.of("QUEEN_STATS_INTERVAL_MS", "3600000"));

  private final Wire wire = new Wire(broker);

  @Test
  void groupDetailTimeLagIsTheAgeOfTheOldestUnconsumedMessageWhetherTheSnapshotHoldsItOrNot() {
    wire.pushNumbered("aged", "held", 0, 3);
    wire.ackAll(
        broker.get("/api/v1/pop/queue/aged/partition/held?consumerGroup=tl&batch=1").json());
    // the lagging view takes the snapshot, which holds the lagging cursor
    assertThat(broker.get("/api/v1/consumer-groups/lagging?minLagSeconds=0").json()).hasSize(1);
    assertThat(cursor("held").get("offsetLag").asInt()).isEqualTo(2);
    wire.pushNumbered("aged", "later", 0, 3);
    wire.ackAll(
        broker.get("/api/v1/pop/queue/aged/partition/later?consumerGroup=tl&batch=1").json());
    Awaitility.await()
        .atMost(Duration.ofSeconds(10))
        .untilAsserted(
            () -> {
              assertThat(cursor("held").get("timeLagSeconds").asLong()).isBetween(1L, 60L);
              // began to lag after the snapshot was taken: probed
              assertThat(cursor("later").get("timeLagSeconds").asLong()).isBetween(1L, 60L);
            });
    // caught up since the snapshot: no lag, whatever the snapshot says
    wire.ackAll(
        broker.get("/api/v1/pop/queue/aged/partition/held?consumerGroup=tl&batch=5").json());
    assertThat(cursor("held").get("offsetLag").asInt()).isZero();
    assertThat(cursor("held").get("timeLagSeconds").asLong()).isZero();
  }

  private static JsonNode cursor(String partition) {
    for (JsonNode c : broker.get("/api/v1/consumer-groups/tl").json().at("/aged/partitions")) {
      if (c.get("partition").asText().equals(partition)) {
        return c;
      }
    }
    throw new AssertionError("no cursor on " + partition);
  }
}
