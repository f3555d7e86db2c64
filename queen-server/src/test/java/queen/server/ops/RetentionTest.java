package queen.server.ops;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.sql.Connection;
import java.sql.Statement;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.ObjLongConsumer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import queen.server.TestBroker;
import queen.server.Wire;
import queen.server.store.Database;
import queen.server.store.RetentionStore;

/** The Retention contract on plain PostgreSQL. */
class RetentionTest extends RetentionContract {
  @RegisterExtension
  static final TestBroker broker = new TestBroker(Map.of("RETENTION_INTERVAL", "86400000"));

  @Override
  TestBroker broker() {
    return broker;
  }

  // a queue whose deletes failed at every cycle stopped the queues after it in name order, the
  // cleanup of inactive partitions and the VACUUM: storage grew with a line of log per cycle
  @Test
  void aQueueWhoseRetentionFailsDoesNotStopTheQueuesAfterIt() {
    retained("aa-refused", 60, 0);
    retained("zz-after-refused", 60, 0);
    wire.pushNumbered("aa-refused", "p", 0, 1);
    // a partition of the queue beside the failing one, in its page whichever comes first
    wire.pushNumbered("aa-refused", "q", 0, 1);
    wire.pushNumbered("zz-after-refused", "p", 0, 1);
    String refused = broker.sqlText("select " + pid("aa-refused", "p") + "::text");
    broker.sql(
        "create function public.refuse_delete() returns trigger language plpgsql as $$"
            + " begin raise exception 'refused by the test'; end $$");
    broker.sql(
        "create trigger refuse_delete before delete on queen.log_segments for each row"
            + " when (old.partition_id = '"
            + refused
            + "') execute function public.refuse_delete()");
    try {
      SimpleMeterRegistry meters = runAt(Instant.now().plus(Duration.ofHours(1)));
      assertThat(bases("zz-after-refused", "p")).isEmpty();
      assertThat(deleted(meters, "zz-after-refused")).isEqualTo(1);
      assertThat(bases("aa-refused", "p")).containsExactly(0L);
      assertThat(bases("aa-refused", "q")).as("only the failing partition passed over").isEmpty();
      assertThat(deleted(meters, "aa-refused")).isEqualTo(1);
    } finally {
      broker.sql("drop trigger refuse_delete on queen.log_segments");
      broker.sql("drop function public.refuse_delete()");
    }
  }

  // a partition held by an open transaction (a push on a frozen host) stalled the cycle, the
  // page's other partitions and the pushes to them, until PostgreSQL noticed the lost connection
  @Test
  void aPartitionLockedByAnOpenTransactionIsPassedOverAfterTwoSeconds() throws Exception {
    retained("held", 60, 0);
    wire.pushNumbered("held", "p", 0, 1);
    wire.pushNumbered("held", "q", 0, 1);
    try (java.sql.Connection holder = broker.connect()) {
      holder.setAutoCommit(false);
      holder
          .createStatement()
          .execute(
              "select 1 from queen.log_partitions where id = "
                  + pid("held", "p")
                  + " for no key update");
      org.junit.jupiter.api.Assertions.assertTimeoutPreemptively(
          Duration.ofSeconds(30), () -> runAt(Instant.now().plus(Duration.ofHours(1))));
      assertThat(bases("held", "q")).as("the page's other partition").isEmpty();
      assertThat(bases("held", "p")).as("passed over").containsExactly(0L);
      holder.rollback();
    }
    runAt(Instant.now().plus(Duration.ofHours(1)));
    assertThat(bases("held", "p")).as("the next cycle").isEmpty();
  }

  // with autovacuum off nothing else gathers statistics, and the admin reads were planned blind
  @Test
  void aCycleThatVacuumsAlsoGivesThePlannerStatistics() {
    new Wire(broker).pushNumbered("analyzed", "p", 0, 20);
    List<String> tables = List.of("log_segments", "log_partitions", "log_consumers", "queues");
    Map<String, Long> before = new HashMap<>();
    tables.forEach(t -> before.put(t, analyzed(t)));
    try (Database db = Database.open(broker.db())) {
      new Retention(
              new RetentionStore(db),
              new Retention.Settings(
                  Duration.ofHours(1), 100, 16L << 20, Retention.Vacuum.ON, Duration.ZERO),
              Instant::now,
              new SimpleMeterRegistry(),
              (q, n) -> {})
          .runOnce();
    }
    for (String table : tables) {
      await()
          .atMost(Duration.ofSeconds(10))
          .untilAsserted(
              () -> assertThat(analyzed(table)).as(table).isGreaterThan(before.get(table)));
    }
  }

  // partitions go a page to a transaction within RETENTION_BATCH_SIZE segments in all: none skipped
  @Test
  void expiredSegmentsOfManyPartitionsGoInPagesWithinTheBatchSize() {
    retained("paged", 60, 0);
    for (int p = 0; p < 250; p++) {
      wire.pushNumbered("paged", "p" + p, 0, 1);
      wire.pushNumbered("paged", "p" + p, 1, 1);
    }
    SimpleMeterRegistry meters = new SimpleMeterRegistry();
    runAnHourLaterInBatches(7, 16L << 20, meters, (q, n) -> {});
    assertThat(meters.counter("queen_retention_deleted_segments", "queue", "paged").count())
        .isEqualTo(500);
    assertThat(storedSegments("paged")).isZero();
  }

  // 1,000 segments of about 1 MB in one transaction held a push to the partition 2.2 s
  @Test
  void aTransactionDeletesWithinTheByteBudgetButAtLeastOneSegment() {
    retained("weighed", 60, 0);
    for (int n = 0; n < 3; n++) {
      wire.pushNumbered("weighed", "p", n, 1);
    }
    for (int n = 0; n < 2; n++) {
      wire.pushNumbered("weighed", "q", n, 1);
    }
    List<Long> pages = new ArrayList<>();
    runAnHourLaterInBatches(
        1_000,
        1,
        new SimpleMeterRegistry(),
        (q, n) -> {
          if (q.equals("weighed")) {
            pages.add(n);
          }
        });
    assertThat(pages)
        .as("messages deleted by each transaction")
        .containsExactly(1L, 1L, 1L, 1L, 1L);
    assertThat(storedSegments("weighed")).isZero();
  }

  // a partition's first segment went whatever the transaction had deleted before it (helper-138:
  // 2,615 bytes against a budget of 400)
  @Test
  void onlyATransactionsFirstSegmentMayPassTheByteBudget() {
    retained("budget", 60, 0);
    for (int n = 0; n < 3; n++) {
      wire.pushNumbered("budget", "small", n, 1);
    }
    wire.pushRandom("budget", "big", "big-1");
    String ids =
        "array(select p.id from queen.log_partitions p join queen.queues q on q.id = p.queue_id"
            + " where q.name = 'budget' and p.name in ('small', 'big')"
            + " order by p.name = 'big')";
    long small =
        broker.sqlLong(
            "select sum(octet_length(s.blob)) from queen.log_segments s"
                + " join queen.log_partitions p on p.id = s.partition_id"
                + " join queen.queues q on q.id = p.queue_id"
                + " where q.name = 'budget' and p.name = 'small'");
    String page =
        " from queen.retention_delete_page_v3("
            + ids
            + ", now() + interval '1 hour', null, null, 1000, "
            + (small + 10)
            + ")";
    assertThat(broker.sqlText("select segments || '/' || done" + page))
        .as("small's three segments, and not big's, whose turn comes next")
        .isEqualTo("3/1");
    assertThat(broker.sqlText("select segments || '/' || done" + page))
        .as("big's segment first and alone, bigger than the budget")
        .isEqualTo("1/2");
  }

  /**
   * One cycle an hour from now, in transactions of at most {@code segments} segments and {@code
   * bytes}; {@code deleted} hears what each deleted, by queue.
   */
  private void runAnHourLaterInBatches(
      int segments, long bytes, SimpleMeterRegistry meters, ObjLongConsumer<String> deleted) {
    new Retention(
            new RetentionStore(db),
            new Retention.Settings(
                Duration.ofHours(1), segments, bytes, Retention.Vacuum.OFF, Duration.ZERO),
            () -> Instant.now().plusSeconds(3600),
            meters,
            deleted)
        .runOnce();
  }

  private static long storedSegments(String queue) {
    return broker.sqlLong(
        "select count(*) from queen.log_segments s join queen.log_partitions p on p.id ="
            + " s.partition_id join queen.queues q on q.id = p.queue_id where q.name = '"
            + queue
            + "'");
  }

  /** How many times a table of the schema was analyzed. */
  private static long analyzed(String table) {
    return broker.sqlLong(
        "select analyze_count + autoanalyze_count from pg_stat_user_tables"
            + " where schemaname = 'queen' and relname = '"
            + table
            + "'");
  }

  // the cycle listed the queue's settings before its turn: a configure answered since holds
  @Test
  void aConfigureAnsweredDuringACycleKeepsWhatItKeepsFromThen() throws Exception {
    retained("reconfigured", 60, 0);
    wire.pushNumbered("reconfigured", "a", 0, 1);
    wire.pushNumbered("reconfigured", "b", 0, 1);
    Instant later = created("reconfigured", "b").getFirst().plusSeconds(61);
    String first =
        broker.sqlText(
            "select p.name from queen.log_partitions p join queen.queues q on q.id = p.queue_id"
                + " where q.name = 'reconfigured' and p.name in ('a', 'b')"
                // configure's empty Default partition may sort first
                + " order by p.id limit 1");
    String last = first.equals("a") ? "b" : "a";
    // the cycle stops in the first partition's delete, its settings read, until the test lets go
    // (waiting past retention's lock timeout, 2 s, for the last partition's lock failed the page)
    broker.sql(
        "create function public.hold_delete() returns trigger language plpgsql"
            + " set lock_timeout = 0 as $$"
            + " begin perform pg_advisory_lock(4242); perform pg_advisory_unlock(4242);"
            + " return old; end $$");
    broker.sql(
        "create trigger hold_delete before delete on queen.log_segments for each row"
            + " when (old.partition_id = '"
            + broker.sqlText("select " + pid("reconfigured", first) + "::text")
            + "') execute function public.hold_delete()");
    try (Connection hold = broker.connect();
        Statement st = hold.createStatement()) {
      st.execute("select pg_advisory_lock(4242)");
      CompletableFuture<SimpleMeterRegistry> cycle =
          CompletableFuture.supplyAsync(() -> runAt(later));
      await()
          .atMost(Duration.ofSeconds(10))
          .until(
              () ->
                  broker.sqlLong(
                          "select count(*) from pg_stat_activity where datname ="
                              + " current_database() and wait_event_type = 'Lock'"
                              + " and query like '%retention_delete_page%'")
                      == 1);
      wire.configure("reconfigured", Wire.object().put("retentionEnabled", false));
      st.execute("select pg_advisory_unlock(4242)");
      cycle.get(10, TimeUnit.SECONDS);
    } finally {
      broker.sql("drop trigger hold_delete on queen.log_segments");
      broker.sql("drop function public.hold_delete()");
    }
    assertThat(bases("reconfigured", first)).as("expired before the configure").isEmpty();
    assertThat(bases("reconfigured", last)).as("kept by it").containsExactly(0L);
  }

  // queue mode reads every partition from its first message, whatever its metadata row says
  @Test
  void completedRetentionIgnoresASubscriptionStoredForQueueMode() {
    retained("qmode-sub", 0, 60);
    wire.pushNumbered("qmode-sub", "a", 0, 1);
    consume("qmode-sub", "a", "__QUEUE_MODE__", 1);
    wire.pushNumbered("qmode-sub", "b", 0, 3);
    // what the subscription route of an older broker wrote when asked for queue mode
    broker.sql(
        "update queen.consumer_groups_metadata set subscription_mode = 'timestamp',"
            + " subscription_timestamp = now() where consumer_group = '__QUEUE_MODE__'");
    runAt(created("qmode-sub", "b").getFirst().plusSeconds(61));
    assertThat(bases("qmode-sub", "b")).as("never read by queue mode").containsExactly(0L);
    assertThat(bases("qmode-sub", "a")).as("read, and completed").isEmpty();
  }

  // each call of a cycle started over, probing every partition drained before
  @Test
  void deadLetterDeletesResumeAfterTheLastPartitionEmptied() {
    retained("dl-resume", 1, 0);
    for (String partition : List.of("p", "q", "r")) {
      wire.pushNumbered("dl-resume", partition, 0, 1);
      wire.ackAll(
          wire.popPartition("dl-resume", partition, "batch=10&wait=true&timeout=5000").json(),
          "dlq",
          "poison");
    }
    String queue = "(select id from queen.queues where name = 'dl-resume')";
    // the partitions holding letters: configure created an empty "Default" one too, which sorted
    // first in one run of four
    String ids =
        "select p.id::text from queen.log_partitions p where p.queue_id = "
            + queue
            + " and exists (select 1 from queen.dead_letters d where d.partition_id = p.id)"
            + " order by p.id";
    String first = broker.sqlText(ids + " limit 1");
    String call =
        "select d.deleted || '/' || coalesce(d.last_partition::text, '')"
            + " from queen.retention_dead_letters_v2("
            + queue
            + ", now() + interval '1 hour', null, %s, 2) d";
    // the budget ran out in the second partition: the next call starts after the first only
    assertThat(broker.sqlText(call.formatted("null"))).isEqualTo("2/" + first);
    assertThat(broker.sqlText(call.formatted("'" + first + "'::uuid"))).startsWith("1/");
    assertThat(broker.sqlLong(deadIn("dl-resume"))).isZero();
  }
}
