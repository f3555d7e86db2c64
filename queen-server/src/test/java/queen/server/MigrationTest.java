package queen.server;

import static org.assertj.core.api.Assertions.assertThat;

import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.Statement;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.Callable;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.flywaydb.core.Flyway;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import queen.server.store.DbConfig;

class MigrationTest {
  private DbConfig db;

  @BeforeEach
  void freshDatabase() throws Exception {
    db = TestBroker.createDatabase("queen_t_migration_" + Long.toHexString(System.nanoTime()));
  }

  @AfterEach
  void dropDatabase() throws Exception {
    TestBroker.dropDatabase(db.database());
  }

  @Test
  void twoBrokersStartingAtOnceOnAnEmptyDatabaseBothServe() throws Exception {
    CyclicBarrier together = new CyclicBarrier(2);
    Callable<Broker> start =
        () -> {
          together.await();
          return Broker.start(config());
        };
    try (ExecutorService pool = Executors.newVirtualThreadPerTaskExecutor()) {
      List<Future<Broker>> brokers = pool.invokeAll(List.of(start, start));
      try (Broker a = brokers.get(0).get();
          Broker b = brokers.get(1).get()) {
        assertThat(a.port()).isNotEqualTo(b.port());
        assertThat(scalar("select count(*) from queen.flyway_schema_history where not success"))
            .isZero();
      }
    }
  }

  @Test
  void restartingOnAMigratedDatabaseChangesNothing() throws Exception {
    try (Broker first = Broker.start(config())) {
      assertThat(first.port()).isPositive();
    }
    long applied = scalar("select count(*) from queen.flyway_schema_history");
    try (Broker second = Broker.start(config())) {
      assertThat(second.port()).isPositive();
    }
    assertThat(scalar("select count(*) from queen.flyway_schema_history")).isEqualTo(applied);
  }

  // upgrades roll: brokers of the build before keep calling what they called (operations.md)
  @Test
  void whatBrokersOfEarlierBuildsCallIsStillThereBesideItsSuccessors() throws Exception {
    try (Broker first = Broker.start(config())) {
      assertThat(first.port()).isPositive();
    }
    assertThat(scalar("select total from queen.dead_letter_summary_v1()")).isZero();
    assertThat(scalar("select count(*) from queen.log_expire_waiting_v1(10)")).isZero();
    assertThat(scalar("select count(*) from queen.queue_clear_v1('none', null)")).isEqualTo(1);
    assertThat(
            scalar(
                "select count(*) from queen.queue_clear_page_v1('none', null, null, 10, null,"
                    + " null)"))
        .isEqualTo(1);
    assertThat(
            scalar(
                "select count(*) from (select queen.log_requeue_v1(gen_random_uuid(), 'x', 'y',"
                    + " '\\x00'::bytea, 1) as o) r where r.o is null"))
        .as("no such dead letter")
        .isEqualTo(1);
  }

  @Test
  void functionsLeftByAnOlderBuildAreReplacedOnStart() throws Exception {
    try (Broker first = Broker.start(config())) {
      assertThat(first.port()).isPositive();
    }
    // what an older build leaves behind: a pop function with another body, recorded with the
    // checksum of that body, and the fingerprint of its own migrations
    exec(
        "update queen.system_state set value = '{\"sha256\": \"older\"}'"
            + " where key = 'schema_fingerprint'",
        "drop function queen.log_pop_specific_v1(text, text, text, uuid, integer, boolean, text,"
            + " timestamptz, timestamptz, bigint, bigint)",
        "update queen.flyway_schema_history set checksum = checksum + 1"
            + " where script = 'R__30_pop.sql'");
    try (Broker upgraded = Broker.start(config())) {
      assertThat(upgraded.port()).isPositive();
    }
    assertThat(scalar("select count(*) from pg_proc where proname = 'log_pop_specific_v1'"))
        .isEqualTo(1);
  }

  @Test
  void thePopFunctionsShapedByTheBuildBeforeAreDroppedOnUpgrade() throws Exception {
    try (Broker first = Broker.start(config())) {
      assertThat(first.port()).isPositive();
    }
    // the shapes the build before left, without p_kept_bytes, with their defaults: beside the new
    // ones, a call leaving out a defaulted argument is ambiguous ("function ... is not unique")
    List<String> before =
        List.of(
            "log_pop_v1(uuid, text, uuid, integer, boolean, integer default null,"
                + " text default 'all', timestamptz default null, boolean default false,"
                + " timestamptz default null, bigint default null)",
            "log_pop_specific_v1(text, text, text, uuid, integer, boolean, text default 'all',"
                + " timestamptz default null, timestamptz default null, bigint default null)",
            "log_pop_list_v1(text, text, text[], uuid, integer, integer, boolean,"
                + " text default 'all', timestamptz default null, boolean default false,"
                + " timestamptz default null, bigint default null)",
            "log_pop_scan_v1(uuid, text, uuid, integer, integer, boolean, text, timestamptz,"
                + " timestamptz, bigint)",
            "log_pop_wildcard_v1(text, text, uuid, integer, integer, boolean, text default 'all',"
                + " timestamptz default null, timestamptz default null, bigint default null)",
            "log_pop_discover_v1(text, text, text, uuid, integer, integer, boolean,"
                + " text default 'all', timestamptz default null, timestamptz default null,"
                + " bigint default null)");
    for (String f : before) {
      exec("create function queen." + f + " returns integer language sql as 'select 1'");
    }
    exec(
        "update queen.system_state set value = '{\"sha256\": \"older\"}'"
            + " where key = 'schema_fingerprint'",
        "update queen.flyway_schema_history set checksum = checksum + 1"
            + " where script in ('R__30_pop.sql', 'R__35_pop_candidates.sql')");
    try (Broker upgraded = Broker.start(config())) {
      assertThat(upgraded.port()).isPositive();
    }
    assertThat(
            scalar(
                "select count(*) from (select proname from pg_proc"
                    + " where pronamespace = 'queen'::regnamespace and proname like 'log_pop_%'"
                    + " group by proname having count(*) > 1) twice"))
        .as("one shape of each pop function")
        .isZero();
    assertThat(
            scalar(
                "select count(*) from queen.log_pop_wildcard_v1('none', 'g', gen_random_uuid(),"
                    + " 1, 1, false)"))
        .as("a call leaving out the defaulted arguments")
        .isZero();
  }

  @Test
  void aStartOnASchemaAlreadyCurrentSkipsFlyway() throws Exception {
    try (Broker first = Broker.start(config())) {
      assertThat(first.port()).isPositive();
    }
    long applied = scalar("select count(*) from queen.flyway_schema_history");
    // a Flyway run would re-apply this repeatable script, its checksum now differing
    exec(
        "update queen.flyway_schema_history set checksum = checksum + 1"
            + " where script = 'R__30_pop.sql'");
    try (Broker again = Broker.start(config())) {
      assertThat(again.port()).isPositive();
    }
    assertThat(scalar("select count(*) from queen.flyway_schema_history"))
        .as("the fingerprint matched: no migration ran")
        .isEqualTo(applied);
  }

  @Test
  void whetherTheLogIsDistributedIsPinnedAgainWhenTheCatalogChangedSinceTheLastStart()
      throws Exception {
    try (Broker first = Broker.start(config())) {
      assertThat(first.port()).isPositive();
    }
    // a constant, so that a push does not query the catalog three times
    assertThat(pinnedToPlainPostgres()).isEqualTo(1);
    // the pin of a database whose Citus extension went away since (the mirror of one that got it)
    exec(
        "create or replace function queen.distributed() returns boolean"
            + " language sql immutable as 'select true'");
    try (Broker again = Broker.start(config())) {
      assertThat(again.port()).isPositive();
    }
    assertThat(pinnedToPlainPostgres())
        .as("the start migrated again and pinned the catalog's answer")
        .isEqualTo(1);
  }

  @Test
  void aDatabaseOfAnOlderBuildGetsDerivedPartitionIdsWithEverythingThatNamesThem()
      throws Exception {
    // the schema as the builds before derived partition ids (V12) left it, with random ids
    Flyway.configure()
        .dataSource(db.jdbcUrl(), db.user(), db.password())
        .schemas("queen")
        .createSchemas(true)
        .locations("classpath:db/migration")
        .target("11")
        .load()
        .migrate();
    String queue = "00000000-0000-0000-0000-000000000001";
    String old = "'" + UUID.randomUUID() + "'";
    exec(
        "insert into queen.queues (id, name) values ('" + queue + "', 'legacy')",
        "insert into queen.log_partitions (id, queue_id, name, last_offset) values ("
            + old
            + ", '"
            + queue
            + "', 'p', 1)",
        "insert into queen.log_segments (partition_id, base_offset, msg_count, created_at, blob)"
            + " values ("
            + old
            + ", 0, 2, now(), '\\x00')",
        "insert into queen.log_consumers (partition_id, consumer_group, committed) values ("
            + old
            + ", 'g', 0)",
        "insert into queen.log_txn_index (partition_id, lo, entries) values ("
            + old
            + ", -9223372036854775808, '{5,0}')",
        "insert into queen.dead_letters (partition_id, consumer_group, msg_offset, message_id,"
            + " transaction_id, payload, created_at) values ("
            + old
            + ", 'g', 0, gen_random_uuid(), 't', '\\x00', now())",
        "insert into queen.message_traces (id, partition_id, msg_offset, transaction_id,"
            + " event_type, data, trace_names) values (gen_random_uuid(), "
            + old
            + ", 0, 't', 'info', '{}', '{n}')",
        "insert into queen.message_trace_names (trace_name, created_at, trace_id)"
            + " select 'n', now(), id from queen.message_traces");

    try (Broker upgraded = Broker.start(config())) {
      assertThat(upgraded.port()).isPositive();
    }

    String derived = "md5('" + queue + "/p')::uuid";
    assertThat(scalar("select count(*) from queen.log_partitions where id = " + derived))
        .isEqualTo(1);
    List<String> naming =
        List.of(
            "log_segments",
            "log_consumers",
            "log_txn_index",
            "dead_letters",
            "message_traces",
            "message_trace_names");
    for (String table : naming) {
      assertThat(scalar("select count(*) from queen." + table + " where partition_id = " + derived))
          .as(table)
          .isEqualTo(1);
    }
    // the foreign keys came back: the queue's delete cascades to every row again
    exec("delete from queen.queues where name = 'legacy'");
    for (String table : naming) {
      assertThat(scalar("select count(*) from queen." + table)).as(table).isZero();
    }
  }

  private BrokerConfig config() {
    return TestBroker.configFor(db, Map.of());
  }

  private long scalar(String query) throws Exception {
    try (Connection c = DriverManager.getConnection(db.jdbcUrl(), db.user(), db.password());
        Statement st = c.createStatement();
        ResultSet rs = st.executeQuery(query)) {
      rs.next();
      return rs.getLong(1);
    }
  }

  /** 1 when queen.distributed() is a constant saying false, as on a database without Citus. */
  private long pinnedToPlainPostgres() throws Exception {
    return scalar(
        "select count(*) from pg_proc where proname = 'distributed'"
            + " and provolatile = 'i' and not queen.distributed()");
  }

  private void exec(String... statements) throws Exception {
    try (Connection c = DriverManager.getConnection(db.jdbcUrl(), db.user(), db.password());
        Statement st = c.createStatement()) {
      for (String s : statements) {
        st.execute(s);
      }
    }
  }
}
