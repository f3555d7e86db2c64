package queen.server;

import static org.assertj.core.api.Assertions.assertThat;

import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.Statement;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
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
            + " timestamptz, timestamptz)",
        "update queen.flyway_schema_history set checksum = checksum + 1"
            + " where script = 'R__30_pop.sql'");
    try (Broker upgraded = Broker.start(config())) {
      assertThat(upgraded.port()).isPositive();
    }
    assertThat(scalar("select count(*) from pg_proc where proname = 'log_pop_specific_v1'"))
        .isEqualTo(1);
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

  private void exec(String... statements) throws Exception {
    try (Connection c = DriverManager.getConnection(db.jdbcUrl(), db.user(), db.password());
        Statement st = c.createStatement()) {
      for (String s : statements) {
        st.execute(s);
      }
    }
  }
}
