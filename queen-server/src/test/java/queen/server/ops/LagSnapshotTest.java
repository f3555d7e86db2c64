package queen.server.ops;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import java.time.Clock;
import java.time.Duration;
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import queen.server.Broker;
import queen.server.TestBroker;
import queen.server.Wire;
import queen.server.store.ConsumerGroupStore;
import queen.server.store.Database;

/**
 * The lagging view answers from a snapshot of the most lagging cursors: kept for a statistics
 * interval, refreshed ahead after it, and dropped by a group reset made anywhere.
 */
class LagSnapshotTest {
  /** A long interval: the snapshot is only refreshed when a reset drops it. */
  @RegisterExtension
  static final TestBroker broker = new TestBroker(Map.of("QUEEN_STATS_INTERVAL_MS", "60000"));

  private final Wire wire = new Wire(broker);

  private static long offsetLag(JsonNode lagging, String group, String queue) {
    for (JsonNode l : lagging) {
      if (l.get("consumer_group").asText().equals(group)
          && l.get("queue_name").asText().equals(queue)) {
        return l.get("offset_lag").asLong();
      }
    }
    return 0;
  }

  /** GET from {@code on}, or from the class's broker when null. */
  private static JsonNode get(Broker on, String path) {
    return (on == null ? broker.get(path) : broker.get(on, path)).json();
  }

  private static JsonNode lagging(Broker on) {
    return get(on, "/api/v1/consumer-groups/lagging?minLagSeconds=0");
  }

  /** Pops and acks through the class's broker: an ack elsewhere would race the pop's lease. */
  private void consume(String queue, String group, int batch) {
    wire.ackAll(
        get(
            null,
            "/api/v1/pop/queue/"
                + queue
                + "/partition/p?consumerGroup="
                + group
                + "&batch="
                + batch));
  }

  @Test
  void theSnapshotServesUntilAResetThroughAnyBrokerDropsIt() throws Exception {
    Broker a = null;
    wire.pushNumbered("snap", "p", 0, 3);
    consume("snap", "g", 1);
    assertThat(offsetLag(lagging(a), "g", "snap")).isEqualTo(2);

    consume("snap", "g", 2);
    assertThat(offsetLag(lagging(a), "g", "snap"))
        .as("caught up, but the snapshot is kept for its 60 s interval")
        .isEqualTo(2);

    broker.post("/api/v1/consumer-groups/g/queues/snap/seek", "{\"toEnd\":true}");
    assertThat(offsetLag(lagging(a), "g", "snap")).as("a reset here drops it").isZero();

    try (Broker b = broker.startAnother(Map.of("QUEEN_STATS_INTERVAL_MS", "60000"))) {
      broker.post(
          b,
          "/api/v1/consumer-groups/g/queues/snap/seek",
          Wire.object().put("timestamp", "2000-01-01T00:00:00Z"));
      await()
          .atMost(Duration.ofSeconds(10))
          .untilAsserted(
              () ->
                  assertThat(offsetLag(lagging(a), "g", "snap"))
                      .as("a reset through another broker reaches this one's snapshot")
                      .isEqualTo(3));
    }
  }

  @Test
  void aShortIntervalRenewsTheSnapshotAfterIt() throws Exception {
    try (Broker c = broker.startAnother(Map.of("QUEEN_STATS_INTERVAL_MS", "200"))) {
      wire.pushNumbered("ahead", "p", 0, 4);
      consume("ahead", "h", 1);
      assertThat(offsetLag(lagging(c), "h", "ahead")).isEqualTo(3);
      consume("ahead", "h", 3);
      await()
          .atMost(Duration.ofSeconds(5))
          .untilAsserted(() -> assertThat(offsetLag(lagging(c), "h", "ahead")).isZero());
    }
  }

  // a dashboard polling one group's page, with nobody reading the lagging view, probed every
  // lagging cursor of the page on every request
  @Test
  void aGroupPageWithoutASnapshotHasOneTakenForTheNext() throws Exception {
    wire.pushNumbered("paged", "p", 0, 2);
    consume("paged", "m", 1);
    try (Database db = Database.open(broker.db())) {
      LagSnapshot lags =
          new LagSnapshot(new ConsumerGroupStore(db), Duration.ofMinutes(1), Clock.systemUTC());
      UUID partition =
          UUID.fromString(
              broker.sqlText(
                  "select p.id from queen.log_partitions p join queen.queues q"
                      + " on q.id = p.queue_id where q.name = 'paged'"));
      assertThat(lags.knownOldest().oldestUnconsumedAt("m", partition))
          .as("none yet: the page probes")
          .isNull();
      // asked again (the await asks every 100 ms): one is taken, and the pages after it use it
      await()
          .atMost(Duration.ofSeconds(10))
          .untilAsserted(
              () -> assertThat(lags.knownOldest().oldestUnconsumedAt("m", partition)).isNotNull());
    }
  }

  @Test
  void theStoreKeepsTheMostLaggingFirst() {
    wire.pushNumbered("cap-old", "p", 0, 2);
    wire.pushNumbered("cap-new", "p", 0, 2);
    consume("cap-old", "k", 1);
    consume("cap-new", "k", 1);
    assertThat(broker.sqlLong("select count(*) from queen.groups_lagging_v2(0, 1000)"))
        .isGreaterThanOrEqualTo(2);
    assertThat(broker.sqlLong("select count(*) from queen.groups_lagging_v2(0, 1)")).isEqualTo(1);
    assertThat(
            broker.sqlLong(
                "select count(*) from (select queue_name from queen.groups_lagging_v2(0, 1000)"
                    + " where consumer_group = 'k' limit 1) x where queue_name = 'cap-old'"))
        .as("the oldest unconsumed message first")
        .isEqualTo(1);
  }
}
