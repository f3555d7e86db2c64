package queen.server.http;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;
import static queen.server.Wire.object;

import com.fasterxml.jackson.databind.JsonNode;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import queen.server.TestBroker;
import queen.server.Wire;

class MaxWaitTest {
  @RegisterExtension
  static final TestBroker broker =
      new TestBroker(Map.of("QUEEN_SWEEP_INTERVAL_MS", "100", "QUEEN_STATS_INTERVAL_MS", "100"));

  private final Wire wire = new Wire(broker);

  @Test
  void messagesWaitingLongerThanMaxWaitGoToTheDeadLetters() {
    wire.configure("impatient", object().put("maxWaitTimeSeconds", 1));
    assertThat(broker.get("/api/v1/pop/queue/impatient").status())
        .as("the group's first contact gives it a position; nothing yet")
        .isEqualTo(204);
    wire.pushNumbered("impatient", "Default", 0, 3);
    await()
        .atMost(Duration.ofSeconds(10))
        .until(() -> broker.get("/api/v1/dlq?queue=impatient").json().get("total").asInt() == 3);
    JsonNode dlq = broker.get("/api/v1/dlq?queue=impatient").json();
    assertThat(dlq.get("messages").get(0).get("errorMessage").asText())
        .contains("maxWaitTimeSeconds");
    assertThat(wire.popPartition("impatient", "Default", "batch=10").status()).isEqualTo(204);
    // counted in the queue's series as the acks that dead-letter are (0 before)
    await()
        .atMost(Duration.ofSeconds(10))
        .until(
            () ->
                broker.sqlLong(
                        "select coalesce(sum(m.dead_lettered), 0) from queen.queue_stats_minutes m"
                            + " join queen.queues q on q.id = m.queue_id"
                            + " where q.name = 'impatient'")
                    == 3);
  }

  @Test
  void aLeasedBatchIsNotSweptWhileTheLeaseLives() {
    wire.configure("patient-lease", object().put("leaseTime", 60));
    wire.pushNumbered("patient-lease", "Default", 0, 2);
    JsonNode batch = wire.popPartition("patient-lease", "Default", "batch=10").json();
    // set after the pop: a loaded machine may take longer than maxWait to pop
    wire.configure("patient-lease", object().put("maxWaitTimeSeconds", 1).put("leaseTime", 60));
    // an unleased message beside it, newer: its dead letter shows a sweep ran under maxWait
    assertThat(broker.get("/api/v1/pop/queue/patient-lease").status())
        .as("the group's first contact gives it a position; the batch is leased")
        .isEqualTo(204);
    wire.pushNumbered("patient-lease", "other", 2, 1);
    await()
        .atMost(Duration.ofSeconds(10))
        .until(
            () -> broker.get("/api/v1/dlq?queue=patient-lease").json().get("total").asInt() == 1);
    assertThat(wire.ackAll(batch)).allMatch(a -> a.get("success").asBoolean());
    assertThat(broker.get("/api/v1/dlq?queue=patient-lease").json().findValues("n"))
        .as("the unleased message only")
        .extracting(JsonNode::asInt)
        .containsExactly(2);
  }

  @Test
  void aLateAckOfABatchSweptIntoTheDeadLettersIsRefused() {
    wire.configure("swept-late", object().put("leaseTime", 1));
    wire.pushNumbered("swept-late", "Default", 0, 2);
    JsonNode batch = wire.popPartition("swept-late", "Default", "batch=10").json();
    // set after the pop: a loaded machine may take longer than maxWait to pop
    wire.configure("swept-late", object().put("maxWaitTimeSeconds", 1).put("leaseTime", 1));
    await()
        .atMost(Duration.ofSeconds(10))
        .until(() -> broker.get("/api/v1/dlq?queue=swept-late").json().get("total").asInt() == 2);
    // the consumer stalled past its lease and the sweep dead-lettered its batch: not its ack
    for (JsonNode a : wire.ackAll(batch)) {
      assertThat(a.get("success").asBoolean()).as(a.toString()).isFalse();
    }
  }

  @Test
  void messagesAfterAClearedBacklogWiderThanOneSweepAreSwept() {
    wire.configure("gapped", object());
    assertThat(broker.get("/api/v1/pop/queue/gapped").status())
        .as("the group's first contact gives it a position; nothing yet")
        .isEqualTo(204);
    wire.pushNumbered("gapped", "Default", 0, 2_500);
    assertThat(broker.delete("/api/v1/queues/gapped/clear").status()).isEqualTo(200);
    wire.configure("gapped", object().put("maxWaitTimeSeconds", 1));
    wire.pushNumbered("gapped", "Default", 2_500, 1);
    // the sweep's window started at the cursor, 2,500 messages before anything retained
    await()
        .atMost(Duration.ofSeconds(10))
        .until(() -> broker.get("/api/v1/dlq?queue=gapped").json().get("total").asInt() == 1);
  }

  @Test
  void anExpiredLeaseSweptInPartLeavesNoDeadLetterOnWhatGoesOutAgain() {
    wire.configure("partly", object().put("leaseTime", 2));
    wire.pushNumbered("partly", "Default", 0, 1);
    await()
        .atMost(Duration.ofSeconds(10))
        .until(
            () ->
                broker.sqlLong(
                        "select (now() - max(s.created_at) > interval '3 seconds')::int"
                            + " from queen.log_segments s join queen.log_partitions p"
                            + " on p.id = s.partition_id join queen.queues q on q.id = p.queue_id"
                            + " where q.name = 'partly'")
                    == 1);
    wire.pushNumbered("partly", "Default", 1, 2);
    JsonNode batch = wire.popPartition("partly", "Default", "batch=3").json();
    assertThat(Wire.numbers(batch)).containsExactly(0, 1, 2);
    // the last one dead-lettered inside the lease, which then expires: the sweep takes the first
    // (past maxWait) and clears the batch, so the other two go out again
    broker.post("/api/v1/ack", Wire.ack(batch.get("messages").get(2), "dlq", "poison"));
    // set after the pop, which a loaded machine may delay past the first message's maxWait
    wire.configure("partly", object().put("maxWaitTimeSeconds", 4).put("leaseTime", 2));
    JsonNode dlq =
        await()
            .atMost(Duration.ofSeconds(10))
            .until(
                () -> broker.get("/api/v1/dlq?queue=partly").json(),
                d -> d.findValues("n").stream().anyMatch(n -> n.asInt() == 0));
    assertThat(dlq.findValues("n"))
        .as("the swept one only: the lease's letter on n=2 was kept")
        .extracting(JsonNode::asInt)
        .containsExactly(0);
    // a long-poll: the ring learns the expired lease's partition is free at the lease's end
    assertThat(
            Wire.numbers(
                wire.popPartition("partly", "Default", "batch=10&wait=true&timeout=5000").json()))
        .containsExactly(1, 2);
  }

  // swept only where the group had a cursor: messages of a partition it had not popped yet waited
  // for ever, and went out however old
  @Test
  void aPartitionTheGroupHasNotReadYetIsSweptToo() {
    wire.configure("unread", object().put("maxWaitTimeSeconds", 1));
    assertThat(broker.get("/api/v1/pop/queue/unread?consumerGroup=g").status())
        .as("the group subscribes; nothing yet")
        .isEqualTo(204);
    wire.pushNumbered("unread", "later", 0, 3);
    await()
        .atMost(Duration.ofSeconds(10))
        .until(() -> broker.get("/api/v1/dlq?queue=unread").json().get("total").asInt() == 3);
    assertThat(wire.popPartition("unread", "later", "consumerGroup=g&batch=10").status())
        .isEqualTo(204);
    assertThat(
            broker.sqlLong(
                "select count(*) from queen.dead_letters where consumer_group <> 'g'"
                    + " and transaction_id like 'unread%'"))
        .as("no group that never subscribed")
        .isZero();
  }

  // locked to the sweep's commit, every backlogged cursor of a maxWait queue was skipped by the
  // pops at every interval, on every broker
  @Test
  void aSweepThatMovesNothingLeavesTheCursorsToThePops() throws Exception {
    wire.configure("patient", object().put("maxWaitTimeSeconds", 3600));
    assertThat(broker.get("/api/v1/pop/queue/patient").status()).isEqualTo(204);
    wire.pushNumbered("patient", "Default", 0, 1);
    try (Connection sweep = broker.connect();
        Statement st = sweep.createStatement()) {
      sweep.setAutoCommit(false);
      try (var moved = st.executeQuery("select * from queen.log_expire_waiting_v2(1000)")) {
        assertThat(moved.next()).as("nothing waited an hour").isFalse();
      }
      assertThat(Wire.numbers(wire.popPartition("patient", "Default", "batch=1").json()))
          .containsExactly(0);
      sweep.rollback();
    }
  }

  // a cleared partition's cursor behind its last offset has nothing to move: locked at every
  // sweep, its pops were refused for nothing, and such cursors added up for good
  @Test
  void aClearedPartitionsCursorIsNotLockedBySweeps() throws Exception {
    wire.configure("emptied", object().put("maxWaitTimeSeconds", 1));
    assertThat(broker.get("/api/v1/pop/queue/emptied").status()).isEqualTo(204);
    wire.pushNumbered("emptied", "Default", 0, 3);
    assertThat(broker.delete("/api/v1/queues/emptied/clear").status()).isEqualTo(200);
    String cursor =
        "select 1 from queen.log_consumers c join queen.log_partitions p on p.id = c.partition_id"
            + " join queen.queues q on q.id = p.queue_id where q.name = 'emptied'";
    assertThat(broker.sqlLong("select count(*) from (" + cursor + ") x")).isEqualTo(1);
    try (Connection sweep = broker.connect();
        Statement st = sweep.createStatement();
        Connection other = broker.connect();
        Statement probe = other.createStatement()) {
      sweep.setAutoCommit(false);
      st.executeQuery("select * from queen.log_expire_waiting_v2(1000)").close();
      other.setAutoCommit(false);
      // tried again: a background job of the broker may hold the row a moment, the sweep never
      await()
          .atMost(Duration.ofSeconds(10))
          .until(
              () -> {
                try {
                  probe.execute(cursor + " for update of c nowait");
                  return true;
                } catch (SQLException e) {
                  if (!"55P03".equals(e.getSQLState())) {
                    throw e; // only a lock held is worth another try
                  }
                  other.rollback();
                  return false;
                }
              });
      other.rollback();
      sweep.rollback();
    }
  }

  // a partition another transaction holds (a queue delete, a removal) failed the whole sweep,
  // every queue's, at every interval
  @Test
  void aPartitionHeldElsewhereIsSkippedAndTheOtherQueuesAreSwept() throws Exception {
    wire.configure("held-sweep", object().put("maxWaitTimeSeconds", 1));
    wire.configure("free-sweep", object().put("maxWaitTimeSeconds", 1));
    for (String q : List.of("held-sweep", "free-sweep")) {
      assertThat(broker.get("/api/v1/pop/queue/" + q).status()).isEqualTo(204);
      wire.pushNumbered(q, "Default", 0, 1);
    }
    try (Connection delete = broker.connect();
        Statement st = delete.createStatement()) {
      delete.setAutoCommit(false);
      st.execute(
          "select 1 from queen.log_partitions p join queen.queues q on q.id = p.queue_id"
              + " where q.name = 'held-sweep' for update");
      await()
          .atMost(Duration.ofSeconds(10))
          .until(() -> broker.get("/api/v1/dlq?queue=free-sweep").json().get("total").asInt() == 1);
      delete.rollback();
    }
    await()
        .atMost(Duration.ofSeconds(10))
        .until(() -> broker.get("/api/v1/dlq?queue=held-sweep").json().get("total").asInt() == 1);
  }
}
