package queen.server.ops;

import static org.assertj.core.api.Assertions.assertThat;
import static queen.server.Wire.object;

import com.fasterxml.jackson.databind.JsonNode;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.junit.jupiter.api.Test;
import queen.server.TestBroker;
import queen.server.Wire;
import queen.server.store.Database;
import queen.server.store.RetentionStore;

/**
 * Retention over a real broker() and database, with the service's clock set by the test: the
 * segments' own created_at (stamped by PostgreSQL) are read back and the clock placed relative to
 * them, so nothing waits for time to pass.
 */
abstract class RetentionContract extends RetentionFixture {
  @Test
  void expiredSegmentsAreDeletedOldestFirstAndYoungerOnesKept() {
    retained("expiring", 60, 0);
    wire.pushNumbered("expiring", "p", 0, 10);
    wire.pushNumbered("expiring", "p", 10, 10);
    wire.pushNumbered("expiring", "p", 20, 10);
    List<Instant> created = created("expiring", "p");
    assertThat(created.get(1)).isBefore(created.get(2));

    // the third segment is exactly retentionSeconds old: not older, so kept
    long bytes =
        broker()
            .sqlLong(
                "select sum(octet_length(blob)) from queen.log_segments where partition_id = "
                    + pid("expiring", "p")
                    + " and base_offset < 20");
    SimpleMeterRegistry meters = runAt(created.get(2).plusSeconds(60));

    assertThat(bases("expiring", "p")).containsExactly(20L);
    assertThat(retainedFrom("expiring", "p")).isEqualTo(20);
    assertThat(meters.counter("queen_retention_deleted_segments", "queue", "expiring").count())
        .isEqualTo(2);
    assertThat(meters.counter("queen_retention_deleted_messages", "queue", "expiring").count())
        .isEqualTo(20);
    assertThat(meters.counter("queen_retention_deleted_bytes", "queue", "expiring").count())
        .isEqualTo(bytes);
    assertThat(meters.timer("queen_retention_run").count()).isEqualTo(1);
  }

  @Test
  void retentionSecondsAloneOrRetentionEnabledAloneDeletesNothing() {
    wire.configure(
        "switched-off", object().put("retentionEnabled", false).put("retentionSeconds", 60));
    wire.configure("unset", object().put("retentionEnabled", true));
    wire.pushNumbered("switched-off", "p", 0, 5);
    wire.pushNumbered("unset", "p", 0, 5);

    runAt(Instant.now().plus(Duration.ofDays(365)));

    assertThat(bases("switched-off", "p")).containsExactly(0L);
    assertThat(bases("unset", "p")).containsExactly(0L);
  }

  @Test
  void completedRetentionWaitsForTheSlowestGroupQueueModeIncluded() {
    retained("completed", 0, 60);
    for (int s = 0; s < 3; s++) {
      wire.pushNumbered("completed", "p", s * 10, 10);
    }
    consume("completed", "p", "fast", 30);
    consume("completed", "p", "slow", 10);
    consume("completed", "p", "__QUEUE_MODE__", 20);
    Instant later = created("completed", "p").get(2).plus(Duration.ofHours(1));

    assertThat(deleted(runAt(later), "completed"))
        .as("held by the slow group at offset 9")
        .isEqualTo(1);
    assertThat(bases("completed", "p")).containsExactly(10L, 20L);

    consume("completed", "p", "slow", 20);
    assertThat(deleted(runAt(later), "completed"))
        .as("now held by queue mode at offset 19")
        .isEqualTo(1);
    consume("completed", "p", "__QUEUE_MODE__", 10);
    assertThat(deleted(runAt(later), "completed")).isEqualTo(1);
    assertThat(bases("completed", "p")).isEmpty();
  }

  @Test
  void completedRetentionKeepsWhatIsYoungerThanItsSeconds() {
    retained("completed-young", 0, 60);
    wire.pushNumbered("completed-young", "p", 0, 10);
    consume("completed-young", "p", "__QUEUE_MODE__", 10);
    Instant created = created("completed-young", "p").getFirst();

    assertThat(deleted(runAt(created.plusSeconds(59)), "completed-young")).isZero();
    assertThat(deleted(runAt(created.plusSeconds(61)), "completed-young")).isEqualTo(1);
  }

  @Test
  void aSubscribedGroupWithoutACursorOnAPartitionHoldsItsSegments() {
    retained("held", 0, 60);
    // first contact of "early" records its durable subscription (mode all) on the queue
    assertThat(broker().get("/api/v1/pop/queue/held?consumerGroup=early").status()).isEqualTo(204);
    wire.pushNumbered("held", "late", 0, 10);
    consume("held", "late", "__QUEUE_MODE__", 10);
    Instant later = created("held", "late").getFirst().plus(Duration.ofHours(1));

    assertThat(deleted(runAt(later), "held")).as("early has not read late yet").isZero();

    JsonNode got = wire.popPartition("held", "late", "batch=100&consumerGroup=early").json();
    assertThat(Wire.numbers(got)).hasSize(10);
    wire.ackAll(got);
    assertThat(deleted(runAt(later), "held")).isEqualTo(1);
  }

  @Test
  void queueModePoppingByPartitionHoldsThePartitionsItHasNotReadYet() {
    retained("qm-held", 0, 60);
    wire.pushNumbered("qm-held", "p0", 0, 5);
    consume("qm-held", "p0", "__QUEUE_MODE__", 5);
    // audit reads p7 whole before any queue-mode worker pops it
    wire.pushNumbered("qm-held", "p7", 0, 10);
    consume("qm-held", "p7", "audit", 10);
    Instant later = created("qm-held", "p7").getFirst().plus(Duration.ofHours(1));

    assertThat(deleted(runAt(later), "qm-held")).as("queue mode has not read p7").isZero();
    consume("qm-held", "p7", "__QUEUE_MODE__", 10);
    assertThat(deleted(runAt(later), "qm-held")).as("audit is still on p0").isEqualTo(1);
    assertThat(bases("qm-held", "p7")).isEmpty();
    assertThat(bases("qm-held", "p0")).containsExactly(0L);
  }

  @Test
  void aGroupSubscribedFromATimestampHoldsOnlyWhatItWillRead() {
    retained("held-from", 0, 60);
    wire.pushNumbered("held-from", "elsewhere", 0, 1);
    wire.pushNumbered("held-from", "p", 0, 10);
    wire.pushNumbered("held-from", "p", 10, 10);
    List<Instant> created = created("held-from", "p");
    // a first contact on another partition records the subscription time, between the segments
    Instant from =
        created.get(0).plus(Duration.between(created.get(0), created.get(1)).dividedBy(2));
    assertThat(
            wire.popPartition(
                    "held-from", "elsewhere", "consumerGroup=recent&subscriptionFrom=" + from)
                .status())
        .isEqualTo(204);
    assertThat(
            broker()
                .sqlText(
                    "select m.subscription_mode from queen.consumer_groups_metadata m join queen.queues q"
                        + " on q.id = m.queue_id where q.name = 'held-from' and m.consumer_group = 'recent'"))
        .isEqualTo("timestamp");
    consume("held-from", "p", "__QUEUE_MODE__", 20);

    runAt(created.get(1).plus(Duration.ofHours(1)));
    assertThat(bases("held-from", "p"))
        .as("recent will never read the first segment, and holds the second")
        .containsExactly(10L);
  }

  @Test
  void deadLettersOlderThanRetentionSecondsAreDeleted() {
    retained("dead", 3600, 0);
    for (String partition :
        List.of("p", "q", "r")) { // calls of one each resume partition by partition
      wire.pushNumbered("dead", partition, 0, 2);
      wire.ackAll(wire.popPartition("dead", partition, "batch=10").json(), "dlq", "poison");
    }
    Instant failed = broker().sqlInstant(deadIn("dead").replace("count(*)", "max(d.failed_at)"));

    assertThat(deadLetters(runAt(failed.plusSeconds(60)), "dead")).isZero();
    assertThat(deadLetters(runAt(failed.plusSeconds(3601)), "dead")).isEqualTo(6);
    assertThat(broker().sqlLong(deadIn("dead"))).isZero();
  }

  @Test
  void aConsumerWhoseCursorFellIntoTheDeletedRangeContinuesAtTheNextRetainedMessage() {
    retained("behind", 60, 0);
    for (int s = 0; s < 3; s++) {
      wire.pushNumbered("behind", "p", s * 10, 10);
    }
    JsonNode first = wire.popPartition("behind", "p", "batch=5&consumerGroup=g").json();
    assertThat(Wire.numbers(first)).containsExactly(0, 1, 2, 3, 4);
    wire.ackAll(first);

    runAt(created("behind", "p").get(2).plusSeconds(60));

    JsonNode next = wire.popPartition("behind", "p", "batch=100&consumerGroup=g").json();
    assertThat(Wire.numbers(next)).as("from the first retained message, in order").hasSize(10);
    assertThat(Wire.numbers(next).getFirst()).isEqualTo(20);
    assertThat(wire.ackAll(next).get(0).get("success").asBoolean()).isTrue();
    assertThat(committed("behind", "p", "g")).isEqualTo(29);
  }

  /**
   * Messages 0 to 19 in two pushes to partition p, 0 to 14 leased to group g, then the first push
   * expired by retention: the pop answer.
   */
  private JsonNode leaseOverAnExpiredHead(String queue) {
    retained(queue, 60, 0);
    wire.pushNumbered(queue, "p", 0, 10);
    wire.pushNumbered(queue, "p", 10, 10);
    JsonNode got = wire.popPartition(queue, "p", "batch=15&consumerGroup=g").json();
    runAt(created(queue, "p").get(1).plusSeconds(60));
    return got;
  }

  @Test
  void aLeaseOverMessagesThatExpiredIsStillAcked() {
    JsonNode got = leaseOverAnExpiredHead("leased");
    assertThat(wire.ackAll(got).get(0).get("success").asBoolean()).isTrue();
    JsonNode rest = wire.popPartition("leased", "p", "batch=100&consumerGroup=g").json();
    assertThat(Wire.numbers(rest)).containsExactly(15, 16, 17, 18, 19);
  }

  @Test
  void aLeaseAckedMessageByMessageAfterItsHeadExpiredIsReleased() {
    JsonNode got = leaseOverAnExpiredHead("leased-each");
    String lease = got.get("leaseId").asText();
    // one ack a message (the path a partial batch or another broker takes) of what is left
    for (JsonNode m : got.get("messages")) {
      if (m.at("/data/n").asInt() >= 10) {
        assertThat(wire.ackOne(m, lease, "g").json().get(0).get("success").asBoolean()).isTrue();
      }
    }
    TestBroker.Reply rest = wire.popPartition("leased-each", "p", "batch=100&consumerGroup=g");
    assertThat(rest.status())
        .as("the expired head counts as acked: released, not held to expire and sent again")
        .isEqualTo(200);
    assertThat(Wire.numbers(rest.json())).containsExactly(15, 16, 17, 18, 19);
  }

  @Test
  void aPartitionWhoseSegmentsAllExpiredSealsItsCursorsAndDropsItsIndex() {
    retained("drained", 60, 0);
    wire.pushNumbered("drained", "p", 0, 10);
    wire.popPartition("drained", "p", "batch=1&consumerGroup=g&autoAck=true");

    runAt(created("drained", "p").getFirst().plusSeconds(61));

    assertThat(bases("drained", "p")).isEmpty();
    assertThat(
            broker()
                .sqlLong(
                    "select count(*) from queen.log_txn_index where partition_id = "
                        + pid("drained", "p")))
        .isZero();
    assertThat(wire.popPartition("drained", "p", "batch=10&consumerGroup=g").status())
        .isEqualTo(204);
    assertThat(committed("drained", "p", "g")).as("sealed at the last offset").isEqualTo(9);
    wire.pushNumbered("drained", "p", 10, 1);
    JsonNode later = wire.popPartition("drained", "p", "batch=10&consumerGroup=g").json();
    assertThat(Wire.numbers(later)).containsExactly(10);
  }

  @Test
  void aTransactionIdPushedAgainAfterItsSegmentExpiredIsQueuedAgain() {
    retained("again", 60, 0);
    JsonNode first = push("again", "p", "order-1");
    assertThat(first.get(0).get("status").asText()).isEqualTo("queued");
    assertThat(push("again", "p", "order-1").get(0).get("status").asText())
        .as("inside the window")
        .isEqualTo("duplicate");

    runAt(created("again", "p").getFirst().plusSeconds(61));

    JsonNode second = push("again", "p", "order-1");
    assertThat(second.get(0).get("status").asText())
        .as("the window has passed")
        .isEqualTo("queued");
    assertThat(second.get(0).get("message_id").asText())
        .isNotEqualTo(first.get(0).get("message_id").asText());
    assertThat(push("again", "p", "order-1").get(0).get("status").asText()).isEqualTo("duplicate");
  }

  @Test
  void twoBrokersRunningRetentionAtOnceDeleteEverySegmentExactlyOnce() throws Exception {
    retained("shared", 60, 0);
    int partitions = 30;
    int perPartition = 4;
    for (int p = 0; p < partitions; p++) {
      for (int s = 0; s < perPartition; s++) {
        wire.pushNumbered("shared", "p" + p, s, 1);
      }
    }
    Instant later = Instant.now().plus(Duration.ofHours(1));
    CountDownLatch go = new CountDownLatch(1);
    try (Database other = Database.open(broker().db());
        ExecutorService two = Executors.newFixedThreadPool(2)) {
      List<Future<SimpleMeterRegistry>> runs = new ArrayList<>();
      for (Database each : List.of(db, other)) {
        SimpleMeterRegistry meters = new SimpleMeterRegistry();
        Retention r =
            new Retention(
                new RetentionStore(each), ONE_AT_A_TIME, () -> later, meters, (q, n) -> {});
        runs.add(
            two.submit(
                () -> {
                  go.await();
                  r.runOnce();
                  return meters;
                }));
      }
      go.countDown();
      long both = deleted(runs.get(0).get(), "shared") + deleted(runs.get(1).get(), "shared");
      assertThat(both)
          .as("each segment deleted by exactly one of them")
          .isEqualTo(partitions * perPartition);
    }
    assertThat(segments("shared")).isZero();
  }

  @Test
  void aQueueDeletedWhileRetentionRunsLeavesNothingBehind() throws Exception {
    retained("doomed", 60, 0);
    for (int p = 0; p < 40; p++) {
      wire.pushNumbered("doomed", "p" + p, 0, 3);
      wire.pushNumbered("doomed", "p" + p, 3, 3);
    }
    Instant later = Instant.now().plus(Duration.ofHours(1));
    CountDownLatch go = new CountDownLatch(1);
    try (ExecutorService two = Executors.newFixedThreadPool(2)) {
      Future<SimpleMeterRegistry> run =
          two.submit(
              () -> {
                go.await();
                return runAt(later);
              });
      Future<Integer> delete =
          two.submit(
              () -> {
                go.await();
                return broker().delete("/api/v1/resources/queues/doomed").status();
              });
      go.countDown();
      assertThat(delete.get()).isEqualTo(200);
      assertThat(deleted(run.get(), "doomed")).isBetween(0L, 80L);
    }
    assertThat(broker().sqlLong("select count(*) from queen.queues where name = 'doomed'"))
        .isZero();
    assertThat(
            broker()
                .sqlLong(
                    "select count(*) from queen.log_segments s where not exists"
                        + " (select 1 from queen.log_partitions p where p.id = s.partition_id)"))
        .isZero();
    assertThat(
            broker()
                .sqlLong(
                    "select count(*) from queen.log_txn_index t where not exists"
                        + " (select 1 from queen.log_partitions p where p.id = t.partition_id)"))
        .isZero();
  }

  @Test
  void negativeOrFractionalRetentionOptionsAreRefusedAndChangeNothing() {
    retained("strict", 60, 120);
    for (String bad :
        List.of(
            "{\"retentionSeconds\":-1}",
            "{\"retentionSeconds\":1.5}",
            "{\"completedRetentionSeconds\":\"abc\"}",
            "{\"retentionEnabled\":\"yes\"}")) {
      TestBroker.Reply r =
          broker().post("/api/v1/configure", "{\"queue\":\"strict\",\"options\":" + bad + "}");
      assertThat(r.status()).as(bad).isEqualTo(400);
      String option = bad.substring(2, bad.indexOf('"', 2));
      assertThat(r.json().get("error").asText()).as(bad).contains("options." + option);
    }
    assertThat(
            broker()
                .sqlLong(
                    "select retention_seconds * 1000 + completed_retention_seconds"
                        + " from queen.queues where name = 'strict' and retention_enabled"))
        .isEqualTo(60_120);
  }

  @Test
  void theCountersOfAQueueThatIsGoneGoAtTheNextCycle() {
    // a queue per job: a broker kept four series of every queue retention ever touched
    retained("churned", 60, 0);
    wire.pushNumbered("churned", "p", 0, 10);
    Instant later = created("churned", "p").getFirst().plusSeconds(120);
    SimpleMeterRegistry meters = new SimpleMeterRegistry();
    Retention r = retention(later, meters);
    r.runOnce();
    assertThat(deleted(meters, "churned")).isEqualTo(1);

    assertThat(broker().delete("/api/v1/resources/queues/churned").status()).isEqualTo(200);
    r.runOnce();
    assertThat(meters.find("queen_retention_deleted_segments").tag("queue", "churned").counter())
        .isNull();
    assertThat(meters.find("queen_retention_deleted_messages").tag("queue", "churned").counter())
        .isNull();
  }
}
