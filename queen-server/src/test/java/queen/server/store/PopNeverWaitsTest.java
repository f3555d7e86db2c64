package queen.server.store;

import static org.assertj.core.api.Assertions.assertThat;
import static queen.server.store.PopSql.exec;
import static queen.server.store.PopSql.partitionId;
import static queen.server.store.PopSql.pop;
import static queen.server.store.PopSql.scalar;
import static queen.server.store.PopSql.taken;
import static queen.server.store.PopSql.verdict;

import java.sql.Connection;
import java.time.Instant;
import java.util.List;
import java.util.UUID;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import queen.server.TestBroker;
import queen.server.Wire;

/**
 * A pop never waits for another transaction: a lease, a claim in flight, a cursor or group record
 * being created, and the group seeder each make it answer "locked" at once (each test sets a short
 * lock_timeout, so a wait would fail it). queen.log_pop_v1 called directly.
 */
class PopNeverWaitsTest {
  @RegisterExtension static final TestBroker broker = new TestBroker();
  private final Wire wire = new Wire(broker);

  @Test
  void aLiveLeaseIsSkippedWithoutWaiting() throws Exception {
    wire.pushNumbered("leased", "p", 0, 3);
    try (Connection a = broker.connect();
        Connection b = broker.connect()) {
      UUID pid = partitionId(a, "leased", "p");
      Instant now = Instant.now().truncatedTo(java.time.temporal.ChronoUnit.MICROS);
      assertThat(taken(pop(a, pid, 10, now))).isEqualTo(3);
      exec(b, "set lock_timeout = '200ms'");
      List<PopSql.Row> other = pop(b, pid, 10, now.plusSeconds(1));
      assertThat(verdict(other)).isEqualTo("locked");
      assertThat(other.getFirst().retryAt()).isEqualTo(now.plusSeconds(300));
    }
  }

  @Test
  void aClaimInFlightInAnotherTransactionIsSkippedWithoutWaiting() throws Exception {
    wire.pushNumbered("inflight", "p", 0, 3);
    try (Connection a = broker.connect();
        Connection b = broker.connect()) {
      UUID pid = partitionId(a, "inflight", "p");
      pop(a, pid, 1, null); // create the cursor row
      a.setAutoCommit(false);
      assertThat(taken(pop(a, pid, 10, Instant.now().plusSeconds(600)))).isEqualTo(3);
      exec(b, "set lock_timeout = '200ms'");
      assertThat(verdict(pop(b, pid, 10, Instant.now().plusSeconds(600)))).isEqualTo("locked");
      a.rollback();
    }
  }

  @Test
  void aCursorRowBeingCreatedByAnotherTransactionIsSkippedWithoutWaiting() throws Exception {
    wire.pushNumbered("creating", "p", 0, 3);
    try (Connection a = broker.connect();
        Connection b = broker.connect()) {
      UUID pid = partitionId(a, "creating", "p");
      a.setAutoCommit(false);
      assertThat(taken(pop(a, pid, 10, null))).isEqualTo(3);
      exec(b, "set lock_timeout = '200ms'");
      assertThat(verdict(pop(b, pid, 10, null))).isEqualTo("locked");
      a.commit();
      assertThat(verdict(pop(b, pid, 10, null))).as("now present and leased").isEqualTo("locked");
    }
  }

  @Test
  void aGroupRecordBeingCreatedByAnotherTransactionIsSkippedWithoutWaiting() throws Exception {
    wire.pushNumbered("grouprec", "p1", 0, 1);
    wire.pushNumbered("grouprec", "p2", 0, 1);
    try (Connection a = broker.connect();
        Connection b = broker.connect()) {
      UUID p1 = partitionId(a, "grouprec", "p1");
      UUID p2 = partitionId(a, "grouprec", "p2");
      a.setAutoCommit(false);
      popAs(a, p1, "g", "new");
      exec(b, "set lock_timeout = '200ms'");
      assertThat(verdict(popAs(b, p2, "g", "all"))).isEqualTo("locked");
      a.commit();
      assertThat(verdict(popAs(b, p2, "g", "all")))
          .as("the committed record (mode new) governs the second partition")
          .isEqualTo("empty");
    }
  }

  @Test
  void theGroupSeederLeavesAQueueWhosePartitionRowsAPopIsCreating() throws Exception {
    wire.pushNumbered("seed-vs-pop", "p1", 0, 1);
    wire.pushNumbered("seed-vs-pop", "p2", 0, 1);
    try (Connection a = broker.connect();
        Connection b = broker.connect()) {
      a.setAutoCommit(false);
      popAs(a, partitionId(a, "seed-vs-pop", "p1"), "g", "all");
      exec(b, "set lock_timeout = '200ms'");
      assertThat(
              scalar(
                  b, "select pending from queen.log_seed_group_v1('seed-vs-pop', null, null, 'g')"))
          .as("left for later, without waiting")
          .isEqualTo(1);
      a.commit();
      assertThat(
              scalar(
                  b, "select pending from queen.log_seed_group_v1('seed-vs-pop', null, null, 'g')"))
          .isZero();
      assertThat(scalar(b, "select count(*) from queen.log_consumers where consumer_group = 'g'"))
          .isEqualTo(2);
    }
  }

  @Test
  void aPopSkipsAMissingRowWhileTheGroupSeederRuns() throws Exception {
    wire.pushNumbered("pop-vs-seed", "p1", 0, 1);
    try (Connection a = broker.connect();
        Connection b = broker.connect()) {
      a.setAutoCommit(false);
      exec(a, "select * from queen.log_seed_group_v1('pop-vs-seed', null, null, 'h')");
      exec(b, "set lock_timeout = '200ms'");
      assertThat(verdict(popAs(b, partitionId(b, "pop-vs-seed", "p1"), "h", "all")))
          .isEqualTo("locked");
      a.commit();
      assertThat(taken(popAs(b, partitionId(b, "pop-vs-seed", "p1"), "h", "all"))).isEqualTo(1);
    }
  }

  /** A group's pop of ten messages under the given subscription mode, as a fresh worker. */
  private static List<PopSql.Row> popAs(Connection c, UUID pid, String group, String mode)
      throws Exception {
    return pop(c, pid, group, UUID.randomUUID(), 10, false, mode, null, false, null);
  }
}
