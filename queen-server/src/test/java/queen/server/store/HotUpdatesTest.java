package queen.server.store;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import queen.server.Broker;
import queen.server.TestBroker;
import queen.server.Wire;

/**
 * The cursor rows are updated by every pop and every ack. Those updates must be HOT (no indexed
 * column changes, room on the page), so that their old versions are pruned and take a few pages
 * without any vacuum, as they must on a server whose autovacuum is off or behind.
 */
class HotUpdatesTest {
  @RegisterExtension static final TestBroker broker = new TestBroker();

  private static final int PARTITIONS = 20;
  private static final int PER_PARTITION = 200;

  private final Wire wire = new Wire(broker);

  @Test
  void popsAndAcksThroughTwoBrokersUpdateTheCursorRowsHotAndTheTableStaysSmall() throws Exception {
    for (int p = 0; p < PARTITIONS; p++) {
      wire.pushNumbered("hot", "p" + p, 0, PER_PARTITION);
    }
    // let the pushes' statistics land before the reset
    awaitUpdates("queen.log_partitions", PARTITIONS);
    broker.sql(
        "select pg_stat_reset_single_table_counters('queen.log_consumers'::regclass),"
            + " pg_stat_reset_single_table_counters('queen.log_partitions'::regclass)");
    AtomicInteger consumed = new AtomicInteger();
    // a second broker listens for hints, and half the consumers pop through it: every ack then
    // sends a NOTIFY and a listening backend reads it, as in a cluster
    try (Broker other = broker.startAnother();
        ExecutorService pool = Executors.newVirtualThreadPerTaskExecutor()) {
      List<Future<?>> consumers = new ArrayList<>();
      for (int w = 0; w < 8; w++) {
        Broker via = w % 2 == 0 ? null : other;
        consumers.add(
            pool.submit(
                () -> {
                  while (consumed.get() < PARTITIONS * PER_PARTITION) {
                    String path = "/api/v1/pop/queue/hot?batch=10&consumerGroup=g";
                    TestBroker.Reply r = via == null ? broker.get(path) : broker.get(via, path);
                    if (r.status() == 200) {
                      JsonNode got = r.json();
                      assertThat(wire.ackAll(got).get(0).get("success").asBoolean()).isTrue();
                      consumed.addAndGet(got.get("messages").size());
                    }
                  }
                  return null;
                }));
      }
      for (Future<?> f : consumers) {
        f.get();
      }
    }
    long updates = 2L * PARTITIONS * PER_PARTITION / 10;
    awaitUpdates("queen.log_consumers", updates);
    long hot =
        broker.sqlLong(
            "select n_tup_hot_upd * 1000 / n_tup_upd from pg_stat_user_tables"
                + " where relid = 'queen.log_consumers'::regclass");
    assertThat(hot).as("per mille of cursor updates that were HOT").isGreaterThanOrEqualTo(900);
    assertThat(broker.rowVersionBytes("queen.log_consumers"))
        .as(
            "%d cursor rows after %d updates (%s, oldest backend xmin age %s)",
            PARTITIONS,
            updates,
            broker.updateShape("queen.log_consumers"),
            broker.sqlText(
                "select max(age(backend_xmin)) from pg_stat_activity"
                    + " where datname = current_database()"))
        .isLessThanOrEqualTo(3 * 8192);
    assertThat(
            broker.sqlLong(
                "select n_tup_upd from pg_stat_user_tables"
                    + " where relid = 'queen.log_partitions'::regclass"))
        .as("pops and acks never touch the partition rows")
        .isZero();
  }

  /** Statistics reach the view when the broker's sessions go idle: waits for them to arrive. */
  private static void awaitUpdates(String table, long atLeast) {
    await()
        .atMost(Duration.ofSeconds(30))
        .until(
            () ->
                broker.sqlLong(
                        "select n_tup_upd from pg_stat_user_tables where relid = '"
                            + table
                            + "'::regclass")
                    >= atLeast);
  }
}
