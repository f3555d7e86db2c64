package queen.server.pop;

import static org.assertj.core.api.Assertions.assertThat;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import java.time.Instant;
import java.time.InstantSource;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.Test;
import queen.server.store.Verdict;

class HotListsTest {
  private final SimpleMeterRegistry meters = new SimpleMeterRegistry();
  private final HotLists lists = new HotLists(meters);

  /** A long-poll of the group parked on the gate, for up to 30 s: whether it was woken. */
  private static Future<Boolean> park(
      ExecutorService pool, WakeGate gate, String group, Caller caller) {
    Future<Boolean> parked =
        pool.submit(
            () ->
                WakeGateTest.await(
                    gate, gate.generation(), 30, TimeUnit.SECONDS, group, false, caller));
    Awaitility.await().until(() -> gate.parks(group));
    return parked;
  }

  @Test
  void aGroupThatStoppedPoppingLosesItsRingWhileItsQueueStaysBusy() throws Exception {
    // one-off group names on a busy queue: every push would feed their rings for ever
    lists.ring("q", "gone");
    lists.ring("q", "claiming");
    lists.ring("q", "waiting");
    lists.pushed("q", "p", 1, 0);
    assertThat(lists.ring("q", "claiming").take(1, 1)).as("a claim in flight").hasSize(1);
    Caller caller = new Caller();
    try (ExecutorService pool = Executors.newSingleThreadExecutor()) {
      WakeGate gate = lists.gate("q");
      Future<Boolean> parked = park(pool, gate, "waiting", caller);

      lists.evictIdle(0);

      assertThat(lists.existingRing("q", "gone")).isNull();
      assertThat(gauge("gone")).isFalse();
      assertThat(lists.existingRing("q", "claiming")).as("in flight").isNotNull();
      assertThat(lists.existingRing("q", "waiting")).as("parked").isNotNull();
      assertThat(gauge("waiting")).isTrue();

      lists.pushed("q", "p", 1, 0);
      assertThat(lists.existingRing("q", "gone")).as("a push feeds only the rings kept").isNull();
      assertThat(lists.ring("q", "gone").firstContact())
          .as("the group's next pop starts as a first contact")
          .isTrue();

      caller.leave();
      parked.get(); // woken by the push, or by the leave
    }
  }

  @Test
  void aRingInUseIsKept() {
    lists.ring("q", "g");
    lists.evictIdle(TimeUnit.MINUTES.toNanos(10));
    assertThat(lists.existingRing("q", "g")).isNotNull();
    assertThat(gauge("g")).isTrue();
  }

  @Test
  void aDiscoveryGateAPopLookedUpIsKeptThoughNobodyIsParkedYet() {
    // a pop looks its gate up, then looks in SQL, then parks: a gate dropped in between would be
    // parked on where no push reaches it
    PopTarget.Discovery filter = new PopTarget.Discovery("ns", null);
    WakeGate gate = lists.discoveryGate(filter, "g");
    lists.evictIdle(TimeUnit.MINUTES.toNanos(10));
    assertThat(lists.discoveryGate(filter, "g")).isSameAs(gate);
    lists.evictIdle(0);
    assertThat(lists.discoveryGate(filter, "g")).as("idle, nobody parked").isNotSameAs(gate);
  }

  private boolean gauge(String group) {
    return meters.find("queen_hotlist_partitions").tag("group", group).gauge() != null;
  }

  @Test
  void aPushOrItsHintToAQueueNobodyPopsHereMakesNoStateForIt() {
    // every queue pushed anywhere, or named by any NOTIFY on the hint channel, held a gate and a
    // metrics series here until the idle prune
    lists.pushed("nobody-pops-here", "p", 1, 0);
    assertThat(meters.find("queen_queue_parked_consumers").tag("queue", "nobody-pops-here").gauge())
        .isNull();
    lists.ring("popped-here", "g");
    lists.pushed("popped-here", "p", 1, 0);
    assertThat(lists.existingRing("popped-here", "g").isReady("p")).isTrue();
  }

  @Test
  void anAckOrItsHintBuildsNoRingOnABrokerWhereTheGroupDoesNotPop() {
    // or that broker kept the group's ring for ever, fed by every push
    lists.released("q", "p", "g", false);
    lists.released("q", "p", "g", true);
    assertThat(lists.existingRing("q", "g")).isNull();
    lists.ring("q", "g");
    lists.released("q", "p", "g", true);
    assertThat(lists.existingRing("q", "g").isReady("p")).as("an ack-promote").isTrue();
  }

  @Test
  void theWheelKeepsOneRevisitPerPartitionAndGroup() {
    try (RevisitWheel wheel = new RevisitWheel(lists, InstantSource.system())) {
      Instant later = Instant.now().plus(Duration.ofHours(1));
      for (int i = 0; i < 1000; i++) {
        wheel.schedule("q", "g", "p", later); // a claim a second under an hour's gate
      }
      wheel.schedule("q", "g2", "p", later);
      assertThat(wheel.scheduled()).isEqualTo(2);

      lists.ring("q", "g");
      wheel.schedule("q", "g", "p", Instant.now().plus(Duration.ofMinutes(10)));
      assertThat(wheel.scheduled()).as("a sooner time replaces the later").isEqualTo(2);
      wheel.schedule("q", "g", "p", Instant.now().plusMillis(50));
      Awaitility.await().until(() -> lists.existingRing("q", "g").isReady("p"));
      Awaitility.await().until(() -> wheel.scheduled() == 1);
      wheel.schedule("q", "g", "p", later);
      assertThat(wheel.scheduled()).as("the one that fired is due no longer").isEqualTo(2);
    }
  }

  @Test
  void aRingInUseForgetsThePartitionsItHasNoUseFor() {
    HotList ring = lists.ring("q", "g");
    lists.pushed("q", "order-1", 1, 0);
    HotList.Taken t = ring.take(1, 1).getFirst();
    ring.checkIn("order-1", t.version(), true, Verdict.DELIVERED, false, 0, 0);
    lists.released("q", "order-1", "g", false);
    lists.evictIdle(TimeUnit.MINUTES.toNanos(10));
    lists.evictIdle(TimeUnit.MINUTES.toNanos(10)); // what is older than the previous pass goes
    assertThat(lists.existingRing("q", "g")).isSameAs(ring);
    assertThat(ring.known()).isZero();
  }

  @Test
  void anAckPromoteWithoutARingWakesAPopOfItsGroupButNotOneOfAnother() throws Exception {
    // with QUEEN_HOTLIST=0 no pop has a ring; a hint of another broker's ack must not wake others
    WakeGate gate = lists.gate("q");
    try (ExecutorService pool = Executors.newFixedThreadPool(2)) {
      Caller other = new Caller();
      Future<Boolean> otherParked = park(pool, gate, "other", other);
      lists.released("q", "p", "g", true);
      Awaitility.await()
          .during(Duration.ofMillis(300))
          .atMost(Duration.ofSeconds(2))
          .until(() -> !otherParked.isDone());

      Future<Boolean> parked = park(pool, gate, "g", new Caller());
      lists.released("q", "p", "g", true);
      assertThat(parked.get(10, TimeUnit.SECONDS)).as("woken").isTrue();
      other.leave();
      otherParked.get(10, TimeUnit.SECONDS);
    }
  }
}
