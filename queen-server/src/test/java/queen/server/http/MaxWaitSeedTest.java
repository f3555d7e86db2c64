package queen.server.http;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;
import static queen.server.Wire.object;

import java.sql.Connection;
import java.sql.Statement;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import queen.server.TestBroker;
import queen.server.Wire;

/**
 * The maxWait sweep on partitions a group has not read yet: it creates the cursor the group's first
 * pop would, for a group that took the queue whole and still exists. The broker's own sweep is off
 * here; each test runs the sweep's function on a connection of its own.
 */
class MaxWaitSeedTest {
  @RegisterExtension
  static final TestBroker broker = new TestBroker(Map.of("QUEEN_SWEEP_INTERVAL_MS", "3600000"));

  private final Wire wire = new Wire(broker);

  @Test
  void aGroupThatReadsChosenPartitionsIsNotSweptOnTheOthers() throws Exception {
    wire.configure("chosen", object().put("maxWaitTimeSeconds", 1));
    wire.pushNumbered("chosen", "mine", 0, 1);
    assertThat(wire.popPartition("chosen", "mine", "consumerGroup=h&autoAck=true").status())
        .isEqualTo(200);
    wire.pushNumbered("chosen", "other", 0, 2);
    waitedPastMaxWait("chosen");
    sweep();
    assertThat(broker.sqlLong("select count(*) from queen.dead_letters where consumer_group = 'h'"))
        .isZero();
    assertThat(
            broker.sqlLong("select count(*) from queen.log_consumers where consumer_group = 'h'"))
        .isEqualTo(1);
  }

  // read before a delete committed, the group was recorded anew by the seed, as subscribed to
  // everything: it came back in the listings, and its dead letters piled up every sweep
  @Test
  void aGroupDeletedWhileTheSweepRunsIsNotBroughtBack() throws Exception {
    wire.configure("raced", object().put("maxWaitTimeSeconds", 1));
    for (String g : new String[] {"g1", "g2"}) {
      assertThat(broker.get("/api/v1/pop/queue/raced?consumerGroup=" + g).status()).isEqualTo(204);
    }
    wire.pushNumbered("raced", "later", 0, 1);
    waitedPastMaxWait("raced");
    // the sweep's first cursor insert, whichever group's, waits until the other group is gone
    broker.sql("create table queen.test_released ()");
    broker.sql(
        "create function queen.test_hold() returns trigger language plpgsql as $$ begin"
            + " if current_setting('queen.test_hold', true) = 'on' then"
            + " perform set_config('queen.test_hold', 'off', false);"
            + " for i in 1 .. 200 loop exit when exists (select from queen.test_released);"
            + " perform pg_sleep(0.05); end loop; end if; return new; end $$");
    broker.sql(
        "create trigger test_hold before insert on queen.log_consumers"
            + " for each row execute function queen.test_hold()");
    try (Connection sweep = broker.connect();
        Statement st = sweep.createStatement()) {
      st.execute("set queen.test_hold = 'on'");
      CompletableFuture<Void> running =
          CompletableFuture.runAsync(
              () -> {
                try {
                  st.execute("select * from queen.log_expire_waiting_v2(1000)");
                } catch (java.sql.SQLException e) {
                  throw new IllegalStateException(e);
                }
              });
      String first =
          await().atMost(Duration.ofSeconds(10)).until(this::groupHeldBySweep, g -> g != null);
      String other = first.equals("g1") ? "g2" : "g1";
      assertThat(broker.delete("/api/v1/consumer-groups/" + other + "/queues/raced").status())
          .isEqualTo(200);
      broker.sql("insert into queen.test_released default values");
      running.get(20, java.util.concurrent.TimeUnit.SECONDS);
      assertThat(
              broker.sqlLong(
                  "select count(*) from queen.consumer_groups_metadata where consumer_group = '"
                      + other
                      + "'"))
          .isZero();
      assertThat(
              broker.sqlLong(
                  "select count(*) from queen.dead_letters where consumer_group = '" + other + "'"))
          .isZero();
    } finally {
      broker.sql("drop trigger test_hold on queen.log_consumers");
      broker.sql("drop function queen.test_hold()");
      broker.sql("drop table queen.test_released");
    }
  }

  /** The group whose partition lock the sweep holds, if it holds one. */
  private String groupHeldBySweep() {
    return broker.sqlText(
        "select g from (values ('g1'), ('g2')) v(g), queen.log_partitions p"
            + " join queen.queues q on q.id = p.queue_id"
            + " where q.name = 'raced' and p.name = 'later' and exists (select 1 from pg_locks l"
            + " where l.locktype = 'advisory' and l.objsubid = 1"
            + " and ((l.classid::bigint << 32) | l.objid::bigint)"
            + " = hashtextextended(p.id::text || '/' || v.g, 42))");
  }

  private void waitedPastMaxWait(String queue) {
    await()
        .atMost(Duration.ofSeconds(10))
        .until(
            () ->
                broker.sqlLong(
                        "select (now() - max(s.created_at) > interval '1.5 seconds')::int"
                            + " from queen.log_segments s join queen.log_partitions p"
                            + " on p.id = s.partition_id join queen.queues q on q.id = p.queue_id"
                            + " where q.name = '"
                            + queue
                            + "'")
                    == 1);
  }

  private void sweep() throws Exception {
    try (Connection c = broker.connect();
        Statement st = c.createStatement()) {
      st.execute("select * from queen.log_expire_waiting_v2(1000)");
    }
  }
}
