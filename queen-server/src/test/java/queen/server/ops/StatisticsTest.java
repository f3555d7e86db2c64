package queen.server.ops;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.stream.IntStream;
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
  // the broker's own ticks once an hour: the tests claim the refresh themselves
  @RegisterExtension
  static final TestBroker broker = new TestBroker(Map.of("QUEEN_STATS_INTERVAL_MS", "3600000"));

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
  void aRefreshThatTookLongRunsAtMostATenthOfTheTime() {
    String tick = "select queen.stats_tick_v2('{}', '{}', '{}', '{}', '{}', '{}', '{}', null, 100)";
    lastRefresh("{}", "1 hour");
    assertThat(broker.sqlLong(tick)).as("the first claim").isNotNegative();
    assertThat(
            broker.sqlLong(
                "select (value ->> 'tookMs')::bigint from queen.system_state"
                    + " where key = 'stats_refresh'"))
        .as("its time, recorded")
        .isNotNegative();
    // as a refresh over a few hundred thousand partitions records itself
    lastRefresh("{\"tookMs\": 10000}", "2 seconds");
    assertThat(broker.sqlLong(tick)).as("due after 100 s, not 100 ms").isEqualTo(-1);
    lastRefresh("{\"tookMs\": 10000}", "101 seconds");
    assertThat(broker.sqlLong(tick)).isNotNegative();
  }

  /** The refresh's claim row as a refresh that recorded {@code value} that long ago leaves it. */
  private static void lastRefresh(String value, String ago) {
    broker.sql(
        "insert into queen.system_state (key, value, updated_at) values ('stats_refresh', '"
            + value
            + "', now() - interval '"
            + ago
            + "') on conflict (key) do update set value = excluded.value,"
            + " updated_at = excluded.updated_at");
  }

  @Test
  void aRefreshThatFailsLeavesTheTicksCountsStored() {
    new Wire(broker).configure("refresh-fails", Wire.object().put("leaseTime", 60));
    lastRefresh("{}", "1 hour");
    broker.sql(
        "alter table queen.queue_stats add constraint refresh_fails check (false) not valid");
    try {
      stats.pushed("refresh-fails", 4);
      stats.tick(); // claims the refresh, which fails on the constraint
    } finally {
      broker.sql("alter table queen.queue_stats drop constraint refresh_fails");
    }
    // before, the tick's transaction rolled back with the refresh, and its counts with it
    assertThat(pushed("refresh-fails")).isEqualTo(4);
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

  @Test
  void ticksOfTwoBrokersAndRefreshesAskedForMeetNoDeadlock() throws Exception {
    List<String> queues = IntStream.range(0, 6).mapToObj(i -> "shared-" + i).toList();
    for (String q : queues) {
      new Wire(broker).configure(q, Wire.object().put("leaseTime", 60));
    }
    // each broker refreshes at each tick (its interval 1 ms); the route refreshes when asked
    List<Callable<Void>> work = new ArrayList<>();
    for (int b = 0; b < 2; b++) {
      Statistics other =
          new Statistics(
              new StatsStore(db),
              new BrokerSampler("broker-" + b, Instant.now(), db, Map::of),
              Duration.ofMillis(1));
      work.add(
          () -> {
            for (int i = 0; i < 150; i++) {
              List<String> shuffled = new ArrayList<>(queues);
              Collections.shuffle(shuffled);
              shuffled.forEach(q -> other.pushed(q, 1));
              other.tick();
            }
            return null;
          });
    }
    StatsStore asked = new StatsStore(db);
    work.add(
        () -> {
          for (int i = 0; i < 150; i++) {
            asked.refresh();
          }
          return null;
        });
    try (ExecutorService pool = Executors.newFixedThreadPool(work.size())) {
      for (Future<Void> f : pool.invokeAll(work)) {
        f.get(); // a deadlock (40P01) fails one of the calls
      }
    }
    for (String q : queues) {
      assertThat(pushed(q)).as(q).isEqualTo(300);
    }
  }
}
