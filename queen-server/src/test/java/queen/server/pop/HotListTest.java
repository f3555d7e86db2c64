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
    ring.add("a", 1, 0, 0);
    ring.add("b", 1, 0, 0);
    List<HotList.Taken> first = ring.take(1, 1);
    assertThat(first).extracting(HotList.Taken::partition).containsExactly("a");
    assertThat(ring.take(5, 5)).extracting(HotList.Taken::partition).containsExactly("b");
    assertThat(ring.hasReady()).isFalse();
  }

  @Test
  void sparesStayAvailableToOtherPops() {
    HotList ring = new HotList();
    ring.add("a", 1, 0, 0);
    ring.add("b", 1, 0, 0);
    ring.add("c", 1, 0, 0);
    List<HotList.Taken> taken = ring.take(3, 1);
    assertThat(taken).extracting(HotList.Taken::partition).containsExactly("a", "b", "c");
    assertThat(ring.isReady("a")).as("the one it expects to claim is in flight").isFalse();
    assertThat(ring.isReady("b")).isTrue();
    ring.giveBack(taken.subList(1, 3), 0);
    assertThat(ring.take(5, 5)).extracting(HotList.Taken::partition).containsExactly("b", "c");
  }

  @Test
  void aPartitionAnotherPopIsClaimingLeavesTheRingWithoutBeingHeld() {
    HotList ring = new HotList();
    ring.add("p", 1, 0, 0);
    HotList.Taken spare = ring.take(1, 0).getFirst();
    ring.checkIn("p", spare.version(), spare.exclusive(), Verdict.LOCKED, false, 0, 0);
    assertThat(ring.isReady("p")).isFalse();
    ring.add("p", 1, 0, 0);
    assertThat(ring.isReady("p")).as("not held: the next push makes it ready").isTrue();
  }

  @Test
  void aPushThatRacesAnEmptyClaimKeepsThePartitionReady() {
    HotList ring = new HotList();
    ring.add("p", 1, 0, 0);
    HotList.Taken t = ring.take(1, 1).getFirst();
    ring.add("p", 1, 0, 0); // pushed while the claim ran, maybe after its snapshot
    assertThat(ring.checkIn("p", t.version(), t.exclusive(), Verdict.EMPTY, false, 0, 0)).isTrue();
    assertThat(ring.isReady("p")).isTrue();
  }

  @Test
  void aRingWhoseReseedSawOnlyAPageCannotSayNothingOfAPartitionOutsideIt() {
    HotList ring = new HotList();
    ring.reseeded(List.of("a"), false, 0);
    assertThat(ring.worthClaiming("b")).as("the reseed read every candidate").isFalse();
    ring.reseeded(List.of("a"), true, SECOND);
    assertThat(ring.worthClaiming("a")).isTrue();
    assertThat(ring.worthClaiming("b")).as("a random page may have left it out").isTrue();
    ring.checkIn("b", 0, false, Verdict.EMPTY, false, 0, SECOND);
    assertThat(ring.worthClaiming("b")).as("a claim found it empty").isFalse();
    ring.checkIn("c", 0, false, Verdict.DELIVERED, false, 0, SECOND);
    assertThat(ring.worthClaiming("c")).as("leased by this broker: held").isFalse();
    ring.reseeded(List.of("a"), true, 2 * SECOND);
    assertThat(ring.worthClaiming("b")).as("a hint would have readied it").isFalse();
    assertThat(ring.worthClaiming("c"))
        .as("a lease from before the page may have expired")
        .isTrue();
    ring.checkIn("c", 0, false, Verdict.LOCKED, false, 5 * SECOND, 2 * SECOND);
    assertThat(ring.worthClaiming("c")).as("live until a known time: the wheel's").isFalse();
    for (int i = 3; i < 2 + ReseedSchedule.EMPTY_KEPT; i++) {
      ring.reseeded(List.of("a"), true, i * SECOND);
    }
    assertThat(ring.worthClaiming("b")).as("pushed since, its hint lost?").isTrue();
  }

  @Test
  void anEmptyPartitionLeavesTheRing() {
    HotList ring = new HotList();
    ring.add("p", 1, 0, 0);
    HotList.Taken t = ring.take(1, 1).getFirst();
    ring.checkIn("p", t.version(), t.exclusive(), Verdict.EMPTY, false, 0, 0);
    assertThat(ring.isReady("p")).isFalse();
    assertThat(ring.size()).isZero();
  }

  @Test
  void aLeasedPartitionIsHeldOutAgainstPushesUntilItsLeaseEnds() {
    HotList ring = new HotList();
    ring.add("p", 1, 0, 0);
    HotList.Taken t = ring.take(1, 1).getFirst();
    ring.checkIn("p", t.version(), t.exclusive(), Verdict.DELIVERED, false, 0, 0);
    ring.add("p", 1, 0, SECOND); // a claim would only find it locked
    assertThat(ring.isReady("p")).isFalse();
    assertThat(ring.unhold("p", 2 * SECOND))
        .as("the ack ended the lease and the push above is behind it: wake the parked pops")
        .isTrue();
    assertThat(ring.isReady("p")).isTrue();
  }

  @Test
  void aPushDuringALeaseThatTheAckMissedWakesParkedPopsWhenTheLeaseEnds() {
    HotLists lists = new HotLists(new io.micrometer.core.instrument.simple.SimpleMeterRegistry());
    HotList ring = lists.ring("q", "g");
    lists.pushed("q", "p", 1, 0);
    HotList.Taken t = ring.take(1, 1).getFirst();
    ring.checkIn("p", t.version(), t.exclusive(), Verdict.DELIVERED, false, 0, 0);
    lists.pushed("q", "p", 1, 0); // commits after the ack looked for more
    long seen = lists.gate("q").generation();
    lists.released("q", "p", "g", false);
    assertThat(lists.gate("q").generation()).as("the gate opened again").isGreaterThan(seen);
    assertThat(ring.isReady("p")).isTrue();
  }

  @Test
  void aLockVerdictOnALeaseThatEndedMeanwhileDoesNotStrandThePartition() {
    HotList ring = new HotList();
    ring.add("p", 1, 0, 0);
    HotList.Taken spare = ring.take(1, 0).getFirst(); // pop C borrows p as a spare
    HotList.Taken a = ring.take(1, 1).getFirst(); // pop A claims p
    ring.checkIn("p", a.version(), a.exclusive(), Verdict.DELIVERED, false, 0, 0);
    assertThat(ring.unhold("p", SECOND)).isFalse(); // A's batch acked, nothing behind it
    // C's claim ran while A's lease was live and reports it late, with the lease's end time
    ring.checkIn(
        "p", spare.version(), spare.exclusive(), Verdict.LOCKED, false, 60 * SECOND, SECOND);
    ring.add("p", 1, 0, 2 * SECOND);
    assertThat(ring.isReady("p")).as("the next push is not held back for a minute").isTrue();
  }

  @Test
  void aSparesVerdictDoesNotEndAnotherPopsFlight() {
    HotList ring = new HotList();
    ring.add("p", 1, 0, 0);
    HotList.Taken spare = ring.take(1, 0).getFirst();
    HotList.Taken mine = ring.take(1, 1).getFirst();
    assertThat(mine.exclusive()).isTrue();
    ring.checkIn("p", spare.version(), spare.exclusive(), Verdict.EMPTY, false, 0, 0);
    ring.add("p", 1, 0, SECOND);
    assertThat(ring.isReady("p")).as("still in flight for the pop that took it").isFalse();
    assertThat(ring.checkIn("p", mine.version(), mine.exclusive(), Verdict.EMPTY, false, 0, SECOND))
        .as("its own verdict sees the newer push")
        .isTrue();
  }

  @Test
  void aLeaseEndedWithNothingBehindItWaitsForTheNextPush() {
    HotList ring = new HotList();
    ring.add("p", 1, 0, 0);
    HotList.Taken t = ring.take(1, 1).getFirst();
    ring.checkIn("p", t.version(), t.exclusive(), Verdict.DELIVERED, false, 0, 0);
    assertThat(ring.unhold("p", SECOND)).isFalse();
    assertThat(ring.isReady("p")).isFalse();
    ring.add("p", 1, 0, 2 * SECOND);
    assertThat(ring.isReady("p")).isTrue();
  }

  @Test
  void aLockedOrDeferredPartitionComesBackAtItsKnownTime() {
    HotList ring = new HotList();
    for (Verdict v : List.of(Verdict.LOCKED, Verdict.DEFERRED)) {
      ring.add("p", 1, 0, 0);
      HotList.Taken t = ring.take(1, 1).getFirst();
      ring.checkIn("p", t.version(), t.exclusive(), v, false, 10 * SECOND, 0);
      ring.add("p", 1, 0, 5 * SECOND);
      assertThat(ring.isReady("p")).as(v + " before its time").isFalse();
      ring.add("p", 1, 0, 11 * SECOND);
      assertThat(ring.isReady("p")).as(v + " after its time").isTrue();
      HotList.Taken again = ring.take(1, 1).getFirst();
      ring.checkIn("p", 0, again.exclusive(), Verdict.EMPTY, false, 0, 12 * SECOND);
    }
  }

  @Test
  void aReseedOrARevisitReleasesAHeldPartition() {
    HotList ring = new HotList();
    ring.add("p", 1, 0, 0);
    HotList.Taken t = ring.take(1, 1).getFirst();
    ring.checkIn("p", t.version(), t.exclusive(), Verdict.DELIVERED, false, 0, 0);
    assertThat(ring.startReseed(0, SECOND)).isTrue();
    ring.reseeded(List.of("p"), false, 0); // the lease expired: SQL finds it takeable
    assertThat(ring.isReady("p")).isTrue();
  }

  @Test
  void anAutoAckDeliveryStaysReadyForWhatMayRemain() {
    HotList ring = new HotList();
    ring.add("p", 500, 0, 0);
    HotList.Taken t = ring.take(1, 1).getFirst();
    ring.checkIn("p", t.version(), t.exclusive(), Verdict.DELIVERED, true, 0, 0);
    assertThat(ring.isReady("p")).isTrue();
  }

  @Test
  void untriedCandidatesGoBackToTheRing() {
    HotList ring = new HotList();
    ring.add("a", 1, 0, 0);
    ring.add("b", 1, 0, 0);
    List<HotList.Taken> taken = ring.take(2, 2);
    ring.giveBack(taken.subList(1, 2), 0);
    assertThat(ring.isReady("b")).isTrue();
    assertThat(ring.isReady("a")).isFalse();
  }

  @Test
  void aReseedIsDueFirstThenOncePerIntervalAndEarlyOnlyWhenAFullPageRanDry() {
    HotList ring = new HotList();
    assertThat(ring.primed()).isFalse();
    assertThat(ring.reseedDue(0, SECOND)).isTrue();
    assertThat(ring.startReseed(0, SECOND)).isTrue();
    assertThat(ring.startReseed(0, SECOND)).as("one reseed at a time").isFalse();
    ring.reseeded(List.of("a"), false, 0);
    assertThat(ring.primed()).isTrue();
    assertThat(ring.reseedDue(SECOND / 2, SECOND)).isFalse();
    assertThat(ring.reseedDue(SECOND, SECOND)).isTrue();
    assertThat(ring.startReseed(SECOND, SECOND)).isTrue();
    ring.reseeded(List.of("b"), true, SECOND);
    assertThat(ring.reseedDue(SECOND + 1, SECOND)).as("ring not dry yet").isFalse();
    ring.take(10, 10);
    assertThat(ring.reseedDue(SECOND + 1, SECOND)).as("a full page ran dry").isTrue();
  }

  @Test
  void theMinimumPopWaitHoldsAnUnderFullRingUntilTheWindowEnds() {
    HotList ring = new HotList();
    ring.add("p", 10, 0, 0);
    assertThat(ring.holdUntil(SECOND, 100, Long.MAX_VALUE, 0)).isEqualTo(SECOND);
    assertThat(ring.holdUntil(SECOND, 10, Long.MAX_VALUE, 0)).as("batch full").isZero();
    assertThat(ring.holdUntil(SECOND, 100, Long.MAX_VALUE, SECOND)).as("window over").isZero();
    ring.release("q", 0);
    assertThat(ring.holdUntil(SECOND, 100, Long.MAX_VALUE, 0)).as("unknown amount").isZero();
  }

  @Test
  void theMinimumPopWaitEndsOnceWhatWasPushedPassesThePopsByteBudget() {
    HotList ring = new HotList();
    ring.add("p", 2, 600, 0);
    assertThat(ring.holdUntil(SECOND, 100, 1000, 0)).isEqualTo(SECOND);
    ring.add("q", 1, 500, 0);
    assertThat(ring.holdUntil(SECOND, 100, 1000, 0)).as("1,100 bytes pushed").isZero();
  }

  @Test
  void aRingForgetsPartitionsWhoseLeasesEndedWithNothingBehindThem() {
    // one partition per order: a group that keeps popping met each once and kept it for ever
    HotList ring = new HotList();
    for (int i = 0; i < 1000; i++) {
      String p = "order-" + i;
      ring.add(p, 1, 0, 0);
      HotList.Taken t = ring.take(1, 1).getFirst();
      ring.checkIn(p, t.version(), t.exclusive(), Verdict.DELIVERED, false, 0, 0);
      ring.unhold(p, 0);
    }
    ring.add("leased", 1, 0, 0);
    HotList.Taken leased = ring.take(1, 1).getFirst();
    ring.checkIn("leased", leased.version(), true, Verdict.DELIVERED, false, 0, 0);
    ring.add("ready", 1, 0, 0);
    assertThat(ring.known()).isEqualTo(1002);

    assertThat(ring.prune()).as("nothing is older than the previous prune yet").isZero();
    assertThat(ring.prune()).isEqualTo(1000);
    assertThat(ring.known()).as("the leased and the ready one stay").isEqualTo(2);
    assertThat(ring.isReady("ready")).isTrue();
    assertThat(ring.isReady("leased")).isFalse();

    ring.add("order-7", 1, 0, SECOND);
    assertThat(ring.isReady("order-7")).as("a forgotten partition pushed again").isTrue();
  }

  @Test
  void aReseedLeavesAPartitionGatedUntilAKnownTimeHeldButReleasesAnEndedLease() {
    for (Verdict v : List.of(Verdict.DEFERRED, Verdict.LOCKED)) {
      HotList ring = new HotList();
      ring.add("p", 1, 0, 0);
      HotList.Taken t = ring.take(1, 1).getFirst();
      ring.checkIn("p", t.version(), t.exclusive(), v, false, 100 * SECOND, 0);
      assertThat(ring.startReseed(SECOND, 0)).isTrue();
      ring.reseeded(List.of("p"), false, SECOND); // SQL's candidates do not read the gates
      assertThat(ring.isReady("p"))
          .as(v == Verdict.DEFERRED ? "gated until its time" : "the lease ended early")
          .isEqualTo(v == Verdict.LOCKED);
      long recheck = HotList.GATE_RECHECK_NANOS;
      assertThat(ring.startReseed(recheck, 0)).isTrue();
      ring.reseeded(List.of("p"), false, recheck);
      assertThat(ring.isReady("p")).as(v + ": the queue's options may have changed").isTrue();
    }
  }

  @Test
  void aConfigureReleasesThePartitionsGatesHoldButNotTheLeasedOnes() {
    HotList ring = new HotList();
    ring.add("gated", 1, 0, 0);
    ring.add("leased", 1, 0, 0);
    for (HotList.Taken t : ring.take(2, 2)) {
      Verdict v = t.partition().equals("gated") ? Verdict.DEFERRED : Verdict.DELIVERED;
      ring.checkIn(t.partition(), t.version(), true, v, false, 100 * SECOND, 0);
    }
    assertThat(ring.releaseGates(SECOND)).isEqualTo(1);
    assertThat(ring.isReady("gated")).isTrue();
    assertThat(ring.isReady("leased")).isFalse();

    HotList.Taken claiming = ring.take(1, 1).getFirst(); // a claim that read the old options
    ring.releaseGates(2 * SECOND);
    ring.checkIn("gated", claiming.version(), true, Verdict.DEFERRED, false, 100 * SECOND, 0);
    assertThat(ring.isReady("gated")).as("not held to the old time").isTrue();

    HotList.Taken after = ring.take(1, 1).getFirst(); // a claim that read the new options
    ring.checkIn("gated", after.version(), true, Verdict.DEFERRED, false, 100 * SECOND, 0);
    assertThat(ring.isReady("gated"))
        .as("held to its new time, not claimed again by every pop until then")
        .isFalse();
  }

  @Test
  void aConfigureReleasesAGatedPartitionThatASpareOrANamedPopWasClaiming() {
    HotList ring = new HotList();
    ring.add("gated", 1, 0, 0);
    HotList.Taken spare = ring.take(1, 0).getFirst(); // borrowed: never in flight
    long named = ring.version("gated"); // what a pop of this one partition observes
    ring.releaseGates(SECOND);
    ring.checkIn("gated", spare.version(), false, Verdict.DEFERRED, false, 100 * SECOND, 0);
    assertThat(ring.isReady("gated")).as("a spare's claim that read the old options").isTrue();
    ring.checkIn("gated", named, false, Verdict.DEFERRED, false, 100 * SECOND, 0);
    assertThat(ring.isReady("gated")).as("a named pop's claim that read them").isTrue();
  }

  // over a page of partitions held by delayedProcessing: reseeds ran back to back, each page of
  // gated partitions making nothing takeable and the ring running dry again at once
  @Test
  void aFullPageThatGatesHoldWholeWaitsForTheIntervalBeforeTheNext() {
    HotList ring = new HotList();
    ring.add("a", 1, 0, 0);
    ring.add("b", 1, 0, 0);
    for (HotList.Taken t : ring.take(2, 2)) {
      ring.checkIn(t.partition(), t.version(), true, Verdict.DEFERRED, false, 100 * SECOND, 0);
    }
    ring.add("x", 1, 0, 0);
    ring.take(1, 1); // in flight: SQL lists it, the ring cannot release it
    assertThat(ring.startReseed(SECOND, 10 * SECOND)).isTrue();
    ring.reseeded(List.of("a", "b", "x"), true, SECOND);
    assertThat(ring.hasReady()).isFalse();
    assertThat(ring.startReseed(SECOND + 1, 10 * SECOND)).as("not before the interval").isFalse();
    assertThat(ring.startReseed(11 * SECOND, 10 * SECOND)).isTrue();

    ring.reseeded(List.of("c"), true, 11 * SECOND); // a full page that made "c" takeable
    ring.take(1, 1); // and the ring ran dry
    assertThat(ring.startReseed(11 * SECOND + 1, 10 * SECOND))
        .as("more may wait: at once")
        .isTrue();
  }
}
