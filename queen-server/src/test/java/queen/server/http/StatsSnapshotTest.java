package queen.server.http;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import queen.server.Broker;
import queen.server.TestBroker;
import queen.server.Wire;

/** The statistics ticks of several brokers: counts add up, and the snapshot refreshes itself. */
class StatsSnapshotTest {
  @RegisterExtension
  static final TestBroker broker = new TestBroker(Map.of("QUEEN_STATS_INTERVAL_MS", "200"));

  @Test
  void twoBrokersAddTheirCountsAndOneRefreshesTheSnapshot() {
    try (Broker other = broker.startAnother()) {
      new Wire(broker).pushNumbered("counted", "x", 0, 4);
      broker.post(
          other,
          "/api/v1/push",
          Wire.items(
              List.of(
                  Wire.item("counted", "y", "other-1", Wire.object().put("n", 1)),
                  Wire.item("counted", "y", "other-2", Wire.object().put("n", 2)))));
      Awaitility.await()
          .atMost(Duration.ofSeconds(10))
          .until(() -> total("/api/v1/status/queues") == 6);
      Awaitility.await()
          .atMost(Duration.ofSeconds(10))
          .until(
              () ->
                  broker.sqlLong("select coalesce(sum(pushed), 0) from queen.queue_stats_minutes")
                      == 6);
      assertThat(broker.get("/api/v1/status").json().get("statsAge").asLong()).isLessThan(5);
    }
  }

  @Test
  void theGroupListTakesItsTimeLagFromTheSnapshot() {
    new Wire(broker).pushNumbered("aging", "p", 0, 3);
    broker.get("/api/v1/pop/queue/aging/partition/p?consumerGroup=slow&batch=1&autoAck=true");
    Awaitility.await()
        .atMost(Duration.ofSeconds(15))
        .until(
            () -> {
              for (JsonNode g : broker.get("/api/v1/consumer-groups").json()) {
                if (g.get("name").asText().equals("slow")) {
                  return g.get("maxTimeLag").asLong() >= 2 && g.get("totalLag").asLong() == 2;
                }
              }
              return false;
            });
  }

  @Test
  void aQueueReadByGroupsAloneShowsTheirLeaseInProcessing() {
    new Wire(broker).pushNumbered("groups-only", "p", 0, 5);
    broker.get("/api/v1/pop/queue/groups-only/partition/p?consumerGroup=g&batch=3");
    broker.post("/api/v1/stats/refresh", "{}");
    for (JsonNode q : broker.get("/api/v1/status/queues").json().get("queues")) {
      if (q.get("name").asText().equals("groups-only")) {
        // before, only queue mode's lease counted: 0 processing, 5 pending
        assertThat(q.at("/messages/processing").asLong()).isEqualTo(3);
        assertThat(q.at("/messages/pending").asLong()).isEqualTo(2);
        return;
      }
    }
    throw new AssertionError("groups-only is not listed");
  }

  private static long total(String path) {
    for (JsonNode q : broker.get(path).json().get("queues")) {
      if (q.get("name").asText().equals("counted")) {
        return q.at("/messages/total").asLong();
      }
    }
    return -1;
  }
}
