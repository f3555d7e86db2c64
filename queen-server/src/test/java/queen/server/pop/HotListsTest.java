package queen.server.pop;

import static org.assertj.core.api.Assertions.assertThat;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.Test;

class HotListsTest {
  private final SimpleMeterRegistry meters = new SimpleMeterRegistry();
  private final HotLists lists = new HotLists(meters);

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
      Future<Boolean> parked =
          pool.submit(
              () ->
                  WakeGateTest.await(
                      gate, gate.generation(), 30, TimeUnit.SECONDS, "waiting", false, caller));
      Awaitility.await().until(() -> gate.parks("waiting"));

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
}
