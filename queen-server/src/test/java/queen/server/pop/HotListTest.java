package queen.server.pop;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import queen.server.store.Verdict;

class HotListTest {
  private static final long SECOND = TimeUnit.SECONDS.toNanos(1);

  @Test
  void aTakenPartitionIsNotHandedToAnotherPopUntilCheckedBack() {
    HotList ring = new HotList();
    ring.add("a", 1, 0);
    ring.add("b", 1, 0);
    List<HotList.Taken> first = ring.take(1);
    assertThat(first).extracting(HotList.Taken::partition).containsExactly("a");
    assertThat(ring.take(5)).extracting(HotList.Taken::partition).containsExactly("b");
    assertThat(ring.hasReady()).isFalse();
  }

  @Test
  void aPushThatRacesAnEmptyClaimKeepsThePartitionReady() {
    HotList ring = new HotList();
    ring.add("p", 1, 0);
    HotList.Taken t = ring.take(1).getFirst();
    ring.add("p", 1, 0); // pushed while the claim ran, maybe after its snapshot
    ring.checkIn("p", t.version(), Verdict.EMPTY, false, 0);
    assertThat(ring.isReady("p")).isTrue();
  }

  @Test
  void emptyLeasedDeferredAndMissingPartitionsLeaveTheRing() {
    HotList ring = new HotList();
    for (Verdict v : List.of(Verdict.EMPTY, Verdict.DELIVERED, Verdict.DEFERRED, Verdict.LOCKED)) {
      ring.add("p", 1, 0);
      HotList.Taken t = ring.take(1).getFirst();
      ring.checkIn("p", t.version(), v, false, 0);
      assertThat(ring.isReady("p")).as(v.name()).isFalse();
    }
    assertThat(ring.size()).isZero();
  }

  @Test
  void anAutoAckDeliveryStaysReadyForwhatMayRemain() {
    HotList ring = new HotList();
    ring.add("p", 500, 0);
    HotList.Taken t = ring.take(1).getFirst();
    ring.checkIn("p", t.version(), Verdict.DELIVERED, true, 0);
    assertThat(ring.isReady("p")).isTrue();
  }

  @Test
  void untriedCandidatesGoBackToTheRing() {
    HotList ring = new HotList();
    ring.add("a", 1, 0);
    ring.add("b", 1, 0);
    List<HotList.Taken> taken = ring.take(2);
    ring.giveBack(taken.subList(1, 2), 0);
    assertThat(ring.isReady("b")).isTrue();
    assertThat(ring.isReady("a")).isFalse();
  }

  @Test
  void aReseedIsDueAtFirstThenOncePerIntervalAndAtOnceAfterAFullPage() {
    HotList ring = new HotList();
    assertThat(ring.reseedDue(0, SECOND)).isTrue();
    assertThat(ring.startReseed(0, SECOND)).isTrue();
    assertThat(ring.startReseed(0, SECOND)).as("one reseed at a time").isFalse();
    ring.reseeded(List.of("a"), false, 0);
    assertThat(ring.reseedDue(SECOND / 2, SECOND)).isFalse();
    assertThat(ring.reseedDue(SECOND, SECOND)).isTrue();
    assertThat(ring.startReseed(SECOND, SECOND)).isTrue();
    ring.reseeded(List.of("b"), true, SECOND);
    assertThat(ring.reseedDue(SECOND + 1, SECOND)).as("a full page asks for more").isTrue();
  }

  @Test
  void theMinimumPopWaitHoldsAnUnderFullRingUntilTheWindowEnds() {
    HotList ring = new HotList();
    ring.add("p", 10, 0);
    assertThat(ring.holdUntil(SECOND, 100, 0)).isEqualTo(SECOND);
    assertThat(ring.holdUntil(SECOND, 10, 0)).as("batch full").isZero();
    assertThat(ring.holdUntil(SECOND, 100, SECOND)).as("window over").isZero();
    ring.add("q", -1, 0);
    assertThat(ring.holdUntil(SECOND, 100, 0)).as("unknown amount").isZero();
  }
}
