package queen.server.store;

import static org.assertj.core.api.Assertions.assertThat;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import queen.server.TestBroker;
import queen.server.Wire;

/**
 * Which pops wait for their WAL flush (R__29_pop_commit.sql): each pop runs here in a transaction
 * of its own, and the synchronous_commit it would commit with is read before the rollback. Waiting
 * is the database's own setting ({@code reset_val}), whatever it is.
 */
class PopCommitTest {
  @RegisterExtension static final TestBroker broker = new TestBroker();
  private final Wire wire = new Wire(broker);
  private String queue;
  private String flushed;

  /** A queue of two partitions, five messages each, that group {@code seen} has popped once. */
  @BeforeEach
  void queueTheGroupHasSeen() {
    queue = "q" + UUID.randomUUID().toString().substring(0, 8);
    wire.pushNumbered(queue, "a", 0, 5);
    wire.pushNumbered(queue, "b", 0, 5);
    for (String p : List.of("a", "b")) {
      wire.ackAll(wire.popPartition(queue, p, "batch=1&consumerGroup=seen").json());
    }
    flushed = broker.sqlText("select reset_val from pg_settings where name = 'synchronous_commit'");
  }

  @Test
  void aLeaseOnACursorThatExistsDoesNotWaitForTheFlush() throws SQLException {
    assertThat(commitsWith(pop("a", "seen", false))).isEqualTo("off");
  }

  @Test
  void aFirstContactWaitsSinceASeedForgottenCouldSkipLaterPushes() throws SQLException {
    assertThat(commitsWith(pop("a", "fresh", false))).isEqualTo(flushed);
  }

  @Test
  void anAutoAckWaitsSinceItMovesTheCursor() throws SQLException {
    assertThat(commitsWith(pop("a", "seen", true))).isEqualTo(flushed);
  }

  @Test
  void aFirstContactAfterALeaseInOneTransactionWaits() throws SQLException {
    assertThat(commitsWith(pop("a", "seen", false), pop("b", "fresh", false))).isEqualTo(flushed);
  }

  @Test
  void aLeaseAfterAFirstContactInOneTransactionWaits() throws SQLException {
    assertThat(commitsWith(pop("a", "fresh", false), pop("b", "seen", false))).isEqualTo(flushed);
  }

  @Test
  void oneListPopThatSeedsOnePartitionAndLeasesAnotherWaits() throws SQLException {
    String list =
        String.format(
            "select verdict from queen.log_pop_list_v1('%s', 'half', array['a', 'b'],"
                + " gen_random_uuid(), 10, 2, false)",
            queue);
    wire.ackAll(wire.popPartition(queue, "a", "batch=1&consumerGroup=half").json());
    assertThat(commitsWith(list)).isEqualTo(flushed);
  }

  @Test
  void leasesWaitWhereTheDatabaseAsksForIt() throws SQLException {
    try (Connection c = broker.connect()) {
      c.setAutoCommit(false);
      try (Statement st = c.createStatement()) {
        st.execute("set local queen.flush_leases = true");
      }
      assertThat(run(c, pop("a", "seen", false))).isEqualTo("delivered");
      assertThat(synchronousCommit(c)).isEqualTo(flushed);
      c.rollback();
    }
  }

  @Test
  void aSeedDoesNotMakeTheSessionsNextLeasesWait() throws SQLException {
    try (Connection c = broker.connect()) {
      c.setAutoCommit(false);
      assertThat(run(c, pop("a", "later", false))).isEqualTo("delivered");
      c.commit();
      assertThat(run(c, pop("b", "seen", false))).isEqualTo("delivered");
      assertThat(synchronousCommit(c)).isEqualTo("off");
      c.rollback();
    }
  }

  @Test
  void theSettingEndsWithThePopsTransaction() throws SQLException {
    try (Connection c = broker.connect()) {
      c.setAutoCommit(false);
      assertThat(run(c, pop("a", "seen", false))).isEqualTo("delivered");
      c.commit();
      assertThat(synchronousCommit(c)).isEqualTo(flushed);
    }
  }

  private String pop(String partition, String group, boolean autoAck) {
    return String.format(
        "select verdict from queen.log_pop_specific_v1('%s', '%s', '%s', gen_random_uuid(), 1, %s)",
        queue, partition, group, autoAck);
  }

  /** Runs the pops in one transaction: each must deliver; the setting its commit would use. */
  private static String commitsWith(String... pops) throws SQLException {
    try (Connection c = broker.connect()) {
      c.setAutoCommit(false);
      List<String> verdicts = new ArrayList<>();
      for (String p : pops) {
        verdicts.add(run(c, p));
      }
      assertThat(verdicts).containsOnly("delivered");
      String setting = synchronousCommit(c);
      c.rollback();
      return setting;
    }
  }

  private static String run(Connection c, String query) throws SQLException {
    try (PreparedStatement ps = c.prepareStatement(query);
        ResultSet rs = ps.executeQuery()) {
      assertThat(rs.next()).isTrue();
      return rs.getString(1);
    }
  }

  private static String synchronousCommit(Connection c) throws SQLException {
    try (Statement st = c.createStatement();
        ResultSet rs = st.executeQuery("show synchronous_commit")) {
      rs.next();
      return rs.getString(1);
    }
  }
}
