package queen.server.http;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.sql.Connection;
import java.sql.Statement;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import queen.server.TestBroker;
import queen.server.Wire;

/**
 * A group deleted while a pop is creating its cursors: the delete waits for that pop, so no cursor
 * seeded from the removed subscription outlives it. A group sought while a pop makes first contact:
 * the pop never waits on the seek's cursors.
 */
class GroupDeleteRaceTest {
  @RegisterExtension static final TestBroker broker = new TestBroker();
  private final Wire wire = new Wire(broker);

  @Test
  void aDeleteWaitsForAPopCreatingTheGroupsCursorsAndRemovesThem() throws Exception {
    wire.pushNumbered("racing", "a", 0, 1);
    assertThat(wire.popPartition("racing", "a", "consumerGroup=g").status()).isEqualTo(200);
    wire.pushNumbered("racing", "b", 0, 3);
    try (Connection pop = broker.connect();
        Statement st = pop.createStatement()) {
      // what a first-contact pop does inside its transaction (R__30): the shared (queue, group)
      // lock, then the new partition's cursor, not committed yet
      pop.setAutoCommit(false);
      String queue = "(select id from queen.queues where name = 'racing')";
      st.execute(
          "select pg_advisory_xact_lock_shared(hashtextextended(" + queue + "::text || '/g', 46))");
      st.execute(
          "insert into queen.log_consumers (partition_id, consumer_group, committed) select p.id,"
              + " 'g', 1 from queen.log_partitions p where p.name = 'b'");
      CompletableFuture<TestBroker.Reply> delete =
          CompletableFuture.supplyAsync(() -> broker.delete("/api/v1/consumer-groups/g"));
      await().atMost(Duration.ofSeconds(10)).until(() -> broker.advisoryLockWaiters() > 0);
      assertThat(delete).as("waiting for the pop").isNotDone();
      pop.commit();
      assertThat(delete.get().status()).isEqualTo(200);
    }
    assertThat(
            broker.sqlLong("select count(*) from queen.log_consumers where consumer_group = 'g'"))
        .as("no cursor outlives the delete")
        .isZero();
  }

  @Test
  void aFirstContactPopDuringASeekAnswersWithoutWaitingOnTheSeeksCursors() throws Exception {
    wire.pushNumbered("seeking", "a", 0, 2);
    try (Connection seek = broker.connect();
        Statement st = seek.createStatement()) {
      // a seek of group g, its cursors inserted and not committed yet
      seek.setAutoCommit(false);
      st.execute("select * from queen.group_seek_v1('g', 'seeking', false, '2000-01-01')");
      // first contact of g with the partition: its seed met the seek's uncommitted cursor and
      // waited for it, holding whatever it held (another partition's cursor: a deadlock)
      CompletableFuture<TestBroker.Reply> pop =
          CompletableFuture.supplyAsync(
              () -> wire.popPartition("seeking", "a", "consumerGroup=g&wait=false"));
      assertThat(pop.get(10, java.util.concurrent.TimeUnit.SECONDS).status())
          .as("answered while the seek is open, taking nothing")
          .isEqualTo(204);
      seek.commit();
    }
    // the broker learns of the seek at its next state refresh, as of one made through another
    TestBroker.Reply after =
        await()
            .atMost(Duration.ofSeconds(10))
            .until(
                () -> wire.popPartition("seeking", "a", "consumerGroup=g&wait=false"),
                r -> r.status() == 200);
    assertThat(Wire.numbers(after.json()))
        .as("from where the seek put the cursor")
        .containsExactly(0, 1);
  }

  @Test
  void aDeadlockIsAnsweredAsAConflictToRetryNotAsAnOutage() throws Exception {
    wire.pushNumbered("deadlocked", "a", 0, 1);
    String key = "(select id from queen.queues where name = 'deadlocked')::text || '/g'";
    try (Connection other = broker.connect();
        Statement st = other.createStatement()) {
      // work holding the (queue, group) lock a delete takes second, then waiting for its first
      other.setAutoCommit(false);
      st.execute("select pg_advisory_xact_lock(hashtextextended(" + key + ", 45))");
      CompletableFuture<TestBroker.Reply> delete =
          CompletableFuture.supplyAsync(
              () -> broker.delete("/api/v1/consumer-groups/g/queues/deadlocked"));
      await().atMost(Duration.ofSeconds(10)).until(() -> broker.advisoryLockWaiters() > 0);
      // the delete waited first, so PostgreSQL's check (deadlock_timeout) ends the delete
      st.execute("select pg_advisory_xact_lock(hashtextextended(" + key + ", 46))");
      TestBroker.Reply reply = delete.get(10, java.util.concurrent.TimeUnit.SECONDS);
      assertThat(reply.status()).isEqualTo(503);
      assertThat(reply.headers().firstValue("Retry-After")).contains("1");
      assertThat(reply.json().path("error").asText())
          .as("named a conflict, not a database away")
          .startsWith("Conflict with concurrent work");
      other.commit();
    }
    assertThat(broker.delete("/api/v1/consumer-groups/g/queues/deadlocked").status())
        .as("the retry passes")
        .isEqualTo(200);
  }
}
