package queen.server.http;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;
import static queen.server.Wire.object;

import com.fasterxml.jackson.databind.JsonNode;
import java.time.Duration;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import queen.server.TestBroker;
import queen.server.Wire;

/**
 * Acks and the lease they name (WIRE.md section 8): a stale, expired or released lease changes
 * nothing, a retried ack whose first answer was lost succeeds, one message never gets two
 * successful acks, and what an ack without a lease commits.
 */
class LeaseAckTest {
  @RegisterExtension static final TestBroker broker = new TestBroker();
  private final Wire wire = new Wire(broker);

  @Test
  void anAckWithAStaleLeaseChangesNothing() {
    wire.pushNumbered("stale", "Default", 0, 2);
    JsonNode pop = wire.popPartition("stale", "Default", "batch=2").json();
    JsonNode m = pop.get("messages").get(0);
    for (String lease : List.of(UUID.randomUUID().toString(), "not-a-uuid")) {
      JsonNode ack = wire.ackOne(m, lease, "__QUEUE_MODE__").json();
      assertThat(ack).hasSize(1);
      assertThat(ack.get(0).get("success").asBoolean()).isFalse();
      assertThat(ack.get(0).get("error").asText()).isEqualTo("Invalid or expired lease");
    }
    assertThat(broker.sqlLong(Wire.cursorOf("stale", "__QUEUE_MODE__", "committed"))).isEqualTo(-1);
    assertThat(
            broker.sqlLong(
                Wire.cursorOf("stale", "__QUEUE_MODE__", "(worker_id is not null)::int")))
        .isEqualTo(1);

    JsonNode good = wire.ackOne(m, pop.get("leaseId").asText(), "__QUEUE_MODE__").json().get(0);
    assertThat(good.get("success").asBoolean()).isTrue();
    assertThat(good.get("leaseReleased").asBoolean()).as("one of two acked").isFalse();
    assertThat(broker.sqlLong(Wire.cursorOf("stale", "__QUEUE_MODE__", "committed"))).isZero();
  }

  @Test
  void anAckOnAnExpiredLeaseChangesNothing() {
    JsonNode pop = popUntilTheLeaseExpires("expired", 1);
    JsonNode ack =
        wire.ackOne(pop.get("messages").get(0), pop.get("leaseId").asText(), "__QUEUE_MODE__")
            .json();
    assertThat(ack.get(0).get("success").asBoolean()).isFalse();
    assertThat(ack.get(0).get("error").asText()).isEqualTo("Invalid or expired lease");
    assertThat(broker.sqlLong(Wire.cursorOf("expired", "__QUEUE_MODE__", "committed")))
        .isEqualTo(-1);
  }

  @Test
  void aRetriedAckWhoseFirstAnswerWasLostSucceedsAndChangesNothing() {
    wire.pushNumbered("retried", "Default", 0, 3);
    JsonNode pop = wire.popPartition("retried", "Default", "batch=2").json();
    String lease = pop.get("leaseId").asText();
    JsonNode first = wire.ackAll(pop);
    assertThat(first.get(1).get("leaseReleased").asBoolean()).isTrue();
    // the client never saw that answer (its broker died) and sends the same acks again
    JsonNode again = wire.ackAll(pop);
    for (JsonNode a : again) {
      assertThat(a.get("success").asBoolean()).as(a.toString()).isTrue();
    }
    assertThat(broker.sqlLong(Wire.cursorOf("retried", "__QUEUE_MODE__", "committed")))
        .isEqualTo(1);
    // what the released lease never committed stays refused: the batch rule of WIRE section 8
    JsonNode next = wire.popPartition("retried", "Default", "batch=1").json();
    JsonNode stale =
        wire.ackOne(next.get("messages").get(0), lease, "__QUEUE_MODE__").json().get(0);
    assertThat(stale.get("error").asText()).isEqualTo("Invalid or expired lease");
    assertThat(broker.sqlLong(Wire.cursorOf("retried", "__QUEUE_MODE__", "committed")))
        .isEqualTo(1);
  }

  @Test
  void aLateAckFromAnExpiredLeaseIsRefusedWhenAnotherLeaseProcessedTheMessage() {
    wire.configure("late", object().put("leaseTime", 1));
    wire.pushNumbered("late", "Default", 0, 2);
    JsonNode first = wire.popPartition("late", "Default", "batch=2").json();
    outliveStalls("late");
    // the first consumer stalls past its lease; a second one gets the batch and processes it
    AtomicReference<JsonNode> redelivered = new AtomicReference<>();
    await()
        .atMost(Duration.ofSeconds(10))
        .until(
            () -> {
              TestBroker.Reply r = wire.popPartition("late", "Default", "batch=2");
              redelivered.set(r.status() == 200 ? r.json() : null);
              return redelivered.get() != null;
            });
    JsonNode second = redelivered.get();
    assertThat(second.get("messages")).hasSize(2);
    for (JsonNode a : wire.ackAll(second)) {
      assertThat(a.get("success").asBoolean()).isTrue();
    }
    // one message, one success: the stalled consumer must not be told it processed them too
    for (JsonNode a : wire.ackAll(first)) {
      refusedAsExpired(a);
    }
    assertThat(broker.sqlLong(Wire.cursorOf("late", "__QUEUE_MODE__", "committed"))).isEqualTo(1);
  }

  @Test
  void aRetriedAckSucceedsAlthoughLaterLeasesOfThePartitionWereReleasedSince() {
    wire.pushNumbered("retried-late", "Default", 0, 3);
    JsonNode first = wire.popPartition("retried-late", "Default", "batch=1").json();
    wire.ackAll(first);
    // while the first answer was lost, the partition went on: two more leases came and went
    for (int i = 0; i < 2; i++) {
      wire.ackAll(wire.popPartition("retried-late", "Default", "batch=1").json());
    }
    JsonNode again = wire.ackAll(first).get(0);
    assertThat(again.get("success").asBoolean()).as(again.toString()).isTrue();
    assertThat(broker.sqlLong(Wire.cursorOf("retried-late", "__QUEUE_MODE__", "committed")))
        .isEqualTo(2);
    // a lease id the broker never issued is not one that committed the message
    JsonNode forged =
        wire.ackOne(first.get("messages").get(0), UUID.randomUUID().toString(), null).json().get(0);
    refusedAsExpired(forged);
  }

  @Test
  void aLateAckFromAnExpiredLeaseStaysRefusedAfterLaterLeasesWereReleased() {
    JsonNode stalled = popUntilTheLeaseExpires("late-then", 2);
    wire.pushNumbered("late-then", "Default", 2, 1);
    JsonNode redelivered = wire.popPartition("late-then", "Default", "batch=2").json();
    assertThat(Wire.numbers(redelivered)).containsExactly(0, 1);
    assertThat(wire.ackAll(redelivered)).allMatch(a -> a.get("success").asBoolean());
    assertThat(wire.ackAll(wire.popPartition("late-then", "Default", "batch=2").json()))
        .allMatch(a -> a.get("success").asBoolean());
    for (JsonNode a : wire.ackAll(stalled)) {
      refusedAsExpired(a);
    }
  }

  @Test
  void aLateAckFromAnExpiredLeaseIsRefusedForWhatALeaselessAckCommitted() {
    JsonNode stalled = popUntilTheLeaseExpires("late-leaseless", 1);
    JsonNode m = stalled.get("messages").get(0);
    assertThat(wire.ackOne(m, null, null).json().get(0).get("success").asBoolean()).isTrue();
    JsonNode late = wire.ackOne(m, stalled.get("leaseId").asText(), null).json().get(0);
    refusedAsExpired(late);
  }

  @Test
  void aRetriedAckIsRefusedForWhatASeekHandedOutAgain() {
    wire.pushNumbered("seek-again", "Default", 0, 1);
    JsonNode first = wire.popPartition("seek-again", "Default", "consumerGroup=g").json();
    wire.ackAll(first);
    TestBroker.Reply seek =
        broker.post(
            "/api/v1/consumer-groups/g/queues/seek-again/seek",
            object().put("timestamp", "2000-01-01T00:00:00Z").toString());
    assertThat(seek.status()).isEqualTo(200);
    // the replay is committed by a lease-less ack: no later lease stands in for the first one
    JsonNode m = first.get("messages").get(0);
    assertThat(wire.ackOne(m, null, "g").json().get(0).get("success").asBoolean()).isTrue();
    JsonNode again = wire.ackAll(first).get(0);
    refusedAsExpired(again);
  }

  @Test
  void aLateAckOfALeaseFromBeforeTheGroupWasDeletedIsRefusedOnTheCursorReadAgain() {
    wire.pushNumbered("recreated", "Default", 0, 2);
    JsonNode stalled = wire.popPartition("recreated", "Default", "consumerGroup=g").json();
    assertThat(broker.delete("/api/v1/consumer-groups/g").status()).isEqualTo(200);
    // the group is read again from its start, by another consumer, which processes the batch
    JsonNode again = wire.popPartition("recreated", "Default", "consumerGroup=g").json();
    assertThat(Wire.numbers(again)).containsExactly(0, 1);
    assertThat(wire.ackAll(again)).allMatch(a -> a.get("success").asBoolean());
    // the cursor read again minutes after the first lease was taken (rather than waiting them)
    broker.sql(
        "update queen.log_consumers set created_at = created_at + interval '2 minutes'"
            + " where consumer_group = 'g'");
    for (JsonNode a : wire.ackAll(stalled)) {
      refusedAsExpired(a);
    }
    // the lease of the cursor as it is now: a retry whose first answer was lost still succeeds
    assertThat(wire.ackAll(again)).allMatch(a -> a.get("success").asBoolean());
  }

  // within a minute of the lease the cursor's age told nothing: the stale lease was told success
  @Test
  void aLateAckOfALeaseFromJustBeforeTheGroupWasDeletedIsRefused() {
    wire.pushNumbered("recreated-now", "Default", 0, 2);
    JsonNode stalled = wire.popPartition("recreated-now", "Default", "consumerGroup=g").json();
    assertThat(broker.delete("/api/v1/consumer-groups/g/queues/recreated-now").status())
        .isEqualTo(200);
    JsonNode again = wire.popPartition("recreated-now", "Default", "consumerGroup=g").json();
    assertThat(Wire.numbers(again)).containsExactly(0, 1);
    assertThat(wire.ackAll(again)).allMatch(a -> a.get("success").asBoolean());
    for (JsonNode a : wire.ackAll(stalled)) {
      refusedAsExpired(a);
    }
    assertThat(wire.ackAll(again))
        .as("a retry of the live lease's ack, whose first answer was lost, still succeeds")
        .allMatch(a -> a.get("success").asBoolean());
  }

  // a long-poll kept the lease id of its request: a partition first pushed while it waited got a
  // cursor younger than the lease by the wait, and the lease's retried acks looked like a deleted
  // cursor's
  @Test
  void aLongPollsLeaseIdIsTakenAtItsClaimNotAtItsRequest() throws Exception {
    CompletableFuture<TestBroker.Reply> poll =
        CompletableFuture.supplyAsync(
            () ->
                wire.popPartition(
                    "waited", "Default", "consumerGroup=waiter&wait=true&timeout=20000"));
    await().pollDelay(Duration.ofSeconds(2)).atMost(Duration.ofSeconds(5)).until(() -> true);
    wire.pushNumbered("waited", "Default", 0, 1);
    String lease = poll.get(30, TimeUnit.SECONDS).json().get("leaseId").asText();
    assertThat(
            broker.sqlLong(
                "select (queen.lease_issued_at('"
                    + lease
                    + "') > created_at - interval '1 second')::int from queen.log_consumers"
                    + " where consumer_group = 'waiter'"))
        .isEqualTo(1);
  }

  @Test
  void aLateAckFromAnExpiredLeaseIsRefusedForWhatAnAutoAckPopTookSince() {
    JsonNode stalled = popUntilTheLeaseExpires("late-autoack", 1);
    JsonNode taken = wire.popPartition("late-autoack", "Default", "autoAck=true").json();
    assertThat(Wire.numbers(taken)).containsExactly(0);
    JsonNode late = wire.ackAll(stalled).get(0);
    refusedAsExpired(late);
  }

  @Test
  void aLeaseWhoseBatchALeaselessAckCompletedIsNotToldItAckedIt() {
    wire.pushNumbered("leaseless-done", "Default", 0, 1);
    JsonNode pop = wire.popPartition("leaseless-done", "Default", "batch=1").json();
    JsonNode m = pop.get("messages").get(0);
    JsonNode leaseless = wire.ackOne(m, null, null).json().get(0);
    assertThat(leaseless.get("leaseReleased").asBoolean()).isTrue();
    JsonNode late = wire.ackAll(pop).get(0);
    refusedAsExpired(late);
  }

  @Test
  void aLateAckNamingNoGroupIsNotJudgedByQueueModesCursor() {
    wire.configure("nogroup", object().put("leaseTime", 1));
    wire.pushNumbered("nogroup", "Default", 0, 1);
    // queue mode consumes the message once, by its own lease
    wire.ackAll(wire.popPartition("nogroup", "Default", "batch=1").json());
    // group a's first lease stalls past its end; a second one processes the message
    JsonNode stalled = wire.popPartition("nogroup", "Default", "consumerGroup=a").json();
    outliveStalls("nogroup");
    await()
        .atMost(Duration.ofSeconds(5))
        .until(
            () ->
                broker.sqlLong(Wire.cursorOf("nogroup", "a", "(lease_expires_at < now())::int"))
                    == 1);
    JsonNode second = wire.popPartition("nogroup", "Default", "consumerGroup=a").json();
    assertThat(wire.ackAll(second)).allMatch(a -> a.get("success").asBoolean());
    // the stalled consumer's ack names no group: queue mode's cursor says nothing of its lease
    JsonNode m = stalled.get("messages").get(0);
    refusedAsExpired(wire.ackOne(m, stalled.get("leaseId").asText(), null).json().get(0));
  }

  @Test
  void anAckFromALeaseReleasedByRetryIsRefusedForWhatTheNextLeaseAcked() {
    wire.pushNumbered("reacked", "Default", 0, 3);
    JsonNode first = wire.popPartition("reacked", "Default", "batch=3").json();
    String firstLease = first.get("leaseId").asText();
    // the first consumer gives the batch back; the next one acks two of its three messages
    JsonNode back = wire.ackOne(first.get("messages").get(0), firstLease, null, "retry").json();
    assertThat(back.get(0).get("leaseReleased").asBoolean()).isTrue();
    JsonNode second = wire.popPartition("reacked", "Default", "batch=3").json();
    String secondLease = second.get("leaseId").asText();
    for (int i = 0; i < 2; i++) {
      JsonNode ok = wire.ackOne(second.get("messages").get(i), secondLease, null).json();
      assertThat(ok.get(0).get("success").asBoolean()).isTrue();
    }
    // the first lease released the cursor at -1: what the second acked since is not its to ack
    JsonNode late = wire.ackOne(first.get("messages").get(1), firstLease, null).json().get(0);
    refusedAsExpired(late);
  }

  @Test
  void theLeaseDecidesTheGroupOfAnAckThatNamesNone() {
    wire.pushNumbered("leasegroup", "Default", 0, 1);
    JsonNode pop = wire.popPartition("leasegroup", "Default", "consumerGroup=workers").json();
    JsonNode ack =
        wire.ackOne(pop.get("messages").get(0), pop.get("leaseId").asText(), null).json();
    assertThat(ack.get(0).get("success").asBoolean()).isTrue();
    assertThat(ack.get(0).get("leaseReleased").asBoolean()).isTrue();
    assertThat(broker.sqlLong(Wire.cursorOf("leasegroup", "workers", "committed"))).isZero();
  }

  @Test
  void partialAcksAdvanceOverTheContiguousPrefixOnly() {
    wire.pushNumbered("prefix", "Default", 0, 4);
    JsonNode pop = wire.popPartition("prefix", "Default", "batch=4").json();
    String lease = pop.get("leaseId").asText();
    JsonNode msgs = pop.get("messages");
    wire.ackOne(msgs.get(2), lease, null);
    assertThat(broker.sqlLong(Wire.cursorOf("prefix", "__QUEUE_MODE__", "committed")))
        .isEqualTo(-1);
    wire.ackOne(msgs.get(0), lease, null);
    assertThat(broker.sqlLong(Wire.cursorOf("prefix", "__QUEUE_MODE__", "committed"))).isZero();
    wire.ackOne(msgs.get(1), lease, null);
    assertThat(broker.sqlLong(Wire.cursorOf("prefix", "__QUEUE_MODE__", "committed"))).isEqualTo(2);
    JsonNode last = wire.ackOne(msgs.get(3), lease, null).json().get(0);
    assertThat(last.get("leaseReleased").asBoolean()).isTrue();
    assertThat(broker.sqlLong(Wire.cursorOf("prefix", "__QUEUE_MODE__", "committed"))).isEqualTo(3);
    assertThat(
            broker.sqlLong(Wire.cursorOf("prefix", "__QUEUE_MODE__", "(worker_id is null)::int")))
        .isEqualTo(1);
  }

  @Test
  void anAckOfAnAlreadyCommittedMessageNeverMovesTheCursorBack() {
    wire.pushNumbered("noback", "Default", 0, 3);
    JsonNode first = wire.popPartition("noback", "Default", "batch=3").json();
    wire.ackAll(first);
    JsonNode again = wire.ackOne(first.get("messages").get(0), null, null).json().get(0);
    assertThat(again.get("success").asBoolean()).isTrue();
    assertThat(broker.sqlLong(Wire.cursorOf("noback", "__QUEUE_MODE__", "committed"))).isEqualTo(2);
  }

  @Test
  void aLeaselessAckCommitsTheCursorUpToTheMessage() {
    wire.pushNumbered("leaseless", "Default", 0, 3);
    JsonNode pop = wire.popPartition("leaseless", "Default", "batch=3").json();
    for (JsonNode m : pop.get("messages")) {
      assertThat(wire.ackOne(m, null, null).json().get(0).get("success").asBoolean()).isTrue();
    }
    assertThat(broker.sqlLong(Wire.cursorOf("leaseless", "__QUEUE_MODE__", "committed")))
        .isEqualTo(2);
    assertThat(
            broker.sqlLong(
                Wire.cursorOf("leaseless", "__QUEUE_MODE__", "(worker_id is null)::int")))
        .as("the whole leased batch acked releases the lease")
        .isEqualTo(1);
  }

  @Test
  void outsideALeaseOnlyTheNextMessageMovesTheCursor() {
    JsonNode pop = popUntilTheLeaseExpires("next-only", 3);
    JsonNode later = wire.ackOne(pop.get("messages").get(2), null, null).json().get(0);
    assertThat(later.get("success").asBoolean()).isFalse();
    assertThat(later.get("error").asText()).contains("next one");
    assertThat(broker.sqlLong(Wire.cursorOf("next-only", "__QUEUE_MODE__", "committed")))
        .isEqualTo(-1);
    assertThat(
            wire.ackOne(pop.get("messages").get(0), null, null)
                .json()
                .get(0)
                .get("success")
                .asBoolean())
        .isTrue();
    assertThat(broker.sqlLong(Wire.cursorOf("next-only", "__QUEUE_MODE__", "committed"))).isZero();
  }

  /** An ack answer refused because its lease is not (or no longer) the one that may ack. */
  private static void refusedAsExpired(JsonNode answer) {
    assertThat(answer.get("success").asBoolean()).as(answer.toString()).isFalse();
    assertThat(answer.get("error").asText()).isEqualTo("Invalid or expired lease");
  }

  /** Pops the queue's first n messages under a 1 s lease and waits until that lease expired. */
  private JsonNode popUntilTheLeaseExpires(String queue, int n) {
    wire.configure(queue, object().put("leaseTime", 1));
    wire.pushNumbered(queue, "Default", 0, n);
    JsonNode pop = wire.popPartition(queue, "Default", "batch=" + n).json();
    await()
        .atMost(Duration.ofSeconds(5))
        .until(
            () ->
                broker.sqlLong(
                        Wire.cursorOf(queue, "__QUEUE_MODE__", "(lease_expires_at < now())::int"))
                    == 1);
    outliveStalls(queue);
    return pop;
  }

  /** Leases taken from now on outlive any stall of a loaded machine between a pop and its ack. */
  private void outliveStalls(String queue) {
    wire.configure(queue, object().put("leaseTime", 30));
  }
}
