package queen.server.ops;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assumptions.assumeThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.node.ObjectNode;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import queen.server.TestBroker;
import queen.server.Wire;

/**
 * With the server's autovacuum off, the broker vacuums a table once it holds more dead rows than
 * autovacuum would let pass, and gathers the planner's statistics of a table once it changed by
 * more than that, and not before.
 */
class AutovacuumTest {
  @RegisterExtension
  static final TestBroker broker = new TestBroker(Map.of("ANALYZE_INTERVAL", "200"));

  private static long analyzeCount(String table) {
    return broker.sqlLong(
        "select analyze_count from pg_stat_user_tables where schemaname = 'queen' and relname = '"
            + table
            + "'");
  }

  // a queue filled in minutes had its pages planned on the estimates of an empty table (64 rows
  // for 10,000) until the next retention cycle's VACUUM, 5 minutes later
  @Test
  void aTableFilledPastTheThresholdIsAnalyzedAndAnIdleOneIsNot() {
    assumeTheBrokerDoesIt();
    List<ObjectNode> items = new ArrayList<>();
    for (int i = 0; i < 3_000; i++) {
      items.add(Wire.item("filled", "p" + i % 300, "t" + i, Wire.object().put("n", i)));
    }
    assertThat(broker.post("/api/v1/push", Wire.items(items)).status()).isEqualTo(201);

    // ANALYZE counts the rows: an unanalyzed table has -1, a stale one fewer than it holds
    await()
        .atMost(Duration.ofSeconds(20))
        .untilAsserted(
            () -> {
              assertThat(
                      broker.sqlLong(
                          "select reltuples::bigint from pg_class"
                              + " where oid = 'queen.log_partitions'::regclass"))
                  .isEqualTo(300);
              assertThat(
                      broker.sqlLong(
                          "select reltuples::bigint from pg_class"
                              + " where oid = 'queen.log_segments'::regclass"))
                  .isEqualTo(300);
            });

    // nothing written to the segments since: they are not analyzed again
    long segments = analyzeCount("log_segments");
    await()
        .during(Duration.ofSeconds(2))
        .atMost(Duration.ofSeconds(5))
        .untilAsserted(() -> assertThat(analyzeCount("log_segments")).isEqualTo(segments));
  }

  // retention's VACUUM comes at the end of its cycle: meanwhile the cursor table's 41 rows took
  // 1.7 MB in two minutes of pop+ack
  @Test
  void aTableWithMoreDeadRowsThanAutovacuumLetsPassIsVacuumed() {
    assumeTheBrokerDoesIt();
    long before = vacuumCount("system_state");
    broker.sql(
        "insert into queen.system_state (key, value, updated_at)"
            + " select 'test-' || i, '{}', now() from generate_series(1, 1000) i");
    broker.sql("delete from queen.system_state where key like 'test-%'");
    await()
        .atMost(Duration.ofSeconds(20))
        .untilAsserted(
            () -> {
              assertThat(vacuumCount("system_state")).isGreaterThan(before);
              assertThat(
                      broker.sqlLong(
                          "select n_dead_tup from pg_stat_user_tables"
                              + " where schemaname = 'queen' and relname = 'system_state'"))
                  .isLessThan(50);
            });
    assertThat(broker.metric("queen_tables_vacuumed_total", "")).isPositive();
  }

  private static long vacuumCount(String table) {
    return broker.sqlLong(
        "select vacuum_count from pg_stat_user_tables where schemaname = 'queen' and relname = '"
            + table
            + "'");
  }

  /** Autovacuum on, the server does it; on Citus the rows live in the workers' shards. */
  private static void assumeTheBrokerDoesIt() {
    assumeThat(broker.sqlText("select current_setting('autovacuum')")).isEqualTo("off");
    assumeThat(broker.sqlText("select queen.distributed()::text")).isEqualTo("false");
  }
}
