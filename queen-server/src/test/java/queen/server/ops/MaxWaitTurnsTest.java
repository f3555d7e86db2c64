package queen.server.ops;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import queen.server.Broker;
import queen.server.TestBroker;
import queen.server.Wire;

/**
 * The maxWait sweep's turns among the brokers of one database: each scan reads every backlogged
 * cursor of the queues with a maxWait, so brokers take turns, and a slow scan spaces them out.
 */
class MaxWaitTurnsTest {
  // this broker's own sweep once an hour: the first test claims turns itself
  @RegisterExtension
  static final TestBroker broker = new TestBroker(Map.of("QUEEN_SWEEP_INTERVAL_MS", "3600000"));

  @BeforeAll
  static void aQueueWithAMaxWait() {
    new Wire(broker).configure("patient", Wire.object().put("maxWaitTimeSeconds", 3600));
  }

  private static boolean claim(int intervalMs) {
    return broker.sqlLong("select queen.max_wait_claim_v1(" + intervalMs + ")::int") == 1;
  }

  /** The turn's row as a sweep whose scan took {@code tookMs} that long ago leaves it. */
  private static void lastSweep(long tookMs, String ago) {
    broker.sql(
        "insert into queen.system_state (key, value, updated_at) values ('max_wait_sweep',"
            + " jsonb_build_object('tookMs', "
            + tookMs
            + "), now() - interval '"
            + ago
            + "') on conflict (key) do update set value = excluded.value,"
            + " updated_at = excluded.updated_at");
  }

  @Test
  void oneBrokerSweepsPerIntervalAndASlowScanRunsAtMostATenthOfTheTime() {
    broker.sql("delete from queen.system_state where key = 'max_wait_sweep'");
    assertThat(claim(60_000)).as("the first turn").isTrue();
    assertThat(claim(60_000)).as("another broker within the interval").isFalse();
    // as a slow scan records itself (1.1-1.3 s measured over 300,000 backlogged cursors)
    lastSweep(2_200, "10 seconds");
    assertThat(claim(100)).as("due after 22 s, not 100 ms").isFalse();
    lastSweep(2_200, "23 seconds");
    assertThat(claim(100)).isTrue();
    // however slow the scans, messages past their maxWait move at least every 9 minutes (0.9 x 10)
    lastSweep(3_600_000, "601 seconds");
    assertThat(claim(100)).isTrue();
  }

  @Test
  void noQueueWithAMaxWaitNoTurn() {
    broker.sql("delete from queen.system_state where key = 'max_wait_sweep'");
    broker.sql("update queen.queues set max_wait_time_seconds = 0 where name = 'patient'");
    try {
      assertThat(claim(100)).isFalse();
      assertThat(
              broker.sqlLong(
                  "select count(*) from queen.system_state where key = 'max_wait_sweep'"))
          .as("nothing written")
          .isZero();
    } finally {
      broker.sql("update queen.queues set max_wait_time_seconds = 3600 where name = 'patient'");
    }
  }

  @Test
  void aBrokersTurnRecordsWhatItsScanTook() {
    broker.sql("delete from queen.system_state where key = 'max_wait_sweep'");
    try (Broker sweeping = broker.startAnother(Map.of("QUEEN_SWEEP_INTERVAL_MS", "100"))) {
      await()
          .atMost(Duration.ofSeconds(30))
          .until(
              () ->
                  broker.sqlLong(
                          "select count(*) from queen.system_state where key = 'max_wait_sweep'"
                              + " and value ->> 'tookMs' is not null")
                      == 1);
    }
  }
}
