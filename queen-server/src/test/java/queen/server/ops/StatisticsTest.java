package queen.server.ops;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.time.Instant;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import queen.server.TestBroker;
import queen.server.Wire;
import queen.server.store.Database;
import queen.server.store.StatsStore;

/** The broker's per-queue counts, added to the minute rows at each tick. */
class StatisticsTest {
  @RegisterExtension static final TestBroker broker = new TestBroker();

  private Database db;
  private Statistics stats;

  @BeforeEach
  void open() {
    db = Database.open(broker.db());
    stats =
        new Statistics(
            new StatsStore(db),
            new BrokerSampler("test", Instant.now(), db, Map::of),
            Duration.ofMinutes(1));
  }

  @AfterEach
  void close() {
    db.close();
  }

  private long pushed(String queue) {
    return broker.sqlLong(
        "select coalesce(sum(m.pushed), 0) from queen.queue_stats_minutes m"
            + " join queen.queues q on q.id = m.queue_id where q.name = '"
            + queue
            + "'");
  }

  @Test
  void aQueueWithNothingToCountForATickLeavesTheCountersAndLosesNoCount() {
    // one queue per job: a broker kept a counter of every queue it ever counted
    // made by a configure: a push would be counted by the test broker's own statistics too
    new Wire(broker).configure("job-1", Wire.object().put("leaseTime", 60));
    stats.pushed("job-1", 3);
    stats.tick();
    assertThat(pushed("job-1")).isEqualTo(3);
    assertThat(stats.queuesCounted()).isEqualTo(1);

    stats.tick();
    assertThat(stats.queuesCounted()).as("idle for a tick").isZero();

    stats.pushed("job-1", 2);
    stats.tick();
    stats.tick();
    assertThat(pushed("job-1")).isEqualTo(5);
  }
}
