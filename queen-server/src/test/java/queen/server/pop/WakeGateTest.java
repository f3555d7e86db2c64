package queen.server.pop;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.Test;

class WakeGateTest {

  @Test
  void aWakeThatLandsBeforeTheParkIsNotLost() throws Exception {
    WakeGate gate = new WakeGate();
    long seen = gate.generation(); // read before looking for work
    gate.open(); // a push lands while the pop was busy finding nothing
    assertThat(await(gate, seen, 30, TimeUnit.SECONDS, "g", false, new Caller())).isTrue();
  }

  @Test
  void anOpenWakesEveryParkedWaiter() throws Exception {
    WakeGate gate = new WakeGate();
    long seen = gate.generation();
    try (var pool = Executors.newVirtualThreadPerTaskExecutor()) {
      List<CompletableFuture<Boolean>> waiters = park(gate, seen, 50, "g", false, pool);
      Awaitility.await().until(() -> gate.parked() == 50);
      gate.open();
      for (var w : waiters) {
        assertThat(w.get(10, TimeUnit.SECONDS)).isTrue();
      }
    }
    assertThat(gate.parked()).isZero();
  }

  @Test
  void withoutAnOpenTheWaitEndsAtItsBound() throws Exception {
    WakeGate gate = new WakeGate();
    assertThat(await(gate, gate.generation(), 20, TimeUnit.MILLISECONDS, "g", false, new Caller()))
        .isFalse();
  }

  @Test
  void anOpenForOneWakesOneWaiterAndLeavesTheOthersParked() throws Exception {
    WakeGate gate = new WakeGate();
    long seen = gate.generation();
    try (var pool = Executors.newVirtualThreadPerTaskExecutor()) {
      List<CompletableFuture<Boolean>> waiters = park(gate, seen, 20, "g", false, pool);
      Awaitility.await().until(() -> gate.parked() == 20);
      gate.open(1);
      Awaitility.await()
          .until(() -> waiters.stream().filter(CompletableFuture::isDone).count() == 1);
      assertThat(waiters.stream().filter(CompletableFuture::isDone).findFirst().orElseThrow().get())
          .as("woken, not timed out")
          .isTrue();
      // one message's wake must not become 20 looks: the others stay parked
      Awaitility.await()
          .during(Duration.ofMillis(300))
          .atMost(Duration.ofSeconds(2))
          .until(() -> gate.parked() == 19);
      gate.open();
      for (var w : waiters) {
        assertThat(w.get(10, TimeUnit.SECONDS)).isTrue();
      }
    }
  }

  @Test
  void whileAPickyWaiterIsParkedAnOpenForOneWakesEveryone() throws Exception {
    WakeGate gate = new WakeGate();
    long seen = gate.generation();
    try (var pool = Executors.newVirtualThreadPerTaskExecutor()) {
      List<CompletableFuture<Boolean>> waiters = park(gate, seen, 10, "g", false, pool);
      waiters.addAll(park(gate, seen, 1, "g", true, pool));
      Awaitility.await().until(() -> gate.parked() == 11);
      gate.open(1); // the one woken might not be the one this work is for
      for (var w : waiters) {
        assertThat(w.get(10, TimeUnit.SECONDS)).isTrue();
      }
    }
  }

  @Test
  void whileWaitersOfTwoGroupsAreParkedAnOpenForOneWakesEveryone() throws Exception {
    WakeGate gate = new WakeGate();
    long seen = gate.generation();
    try (var pool = Executors.newVirtualThreadPerTaskExecutor()) {
      List<CompletableFuture<Boolean>> waiters = park(gate, seen, 10, "a", false, pool);
      waiters.addAll(park(gate, seen, 1, "b", false, pool));
      Awaitility.await().until(() -> gate.parked() == 11);
      gate.open(1); // one woken might be of the group the work is not for
      for (var w : waiters) {
        assertThat(w.get(10, TimeUnit.SECONDS)).isTrue();
      }
    }
  }

  @Test
  void aWakePassedOnReachesOneWaiterOfOneGroupAndNobodyWhereEveryoneIsWokenAnyway()
      throws Exception {
    WakeGate gate = new WakeGate();
    long seen = gate.generation();
    try (var pool = Executors.newVirtualThreadPerTaskExecutor()) {
      List<CompletableFuture<Boolean>> waiters = park(gate, seen, 5, "a", false, pool);
      Awaitility.await().until(() -> gate.parked() == 5);
      gate.passOn();
      Awaitility.await().until(() -> gate.parked() == 4);
      long later = gate.generation();
      List<CompletableFuture<Boolean>> others = park(gate, later, 1, "b", false, pool);
      Awaitility.await().until(() -> gate.parked() == 5);
      gate.passOn(); // two groups: a push already woke everyone, so there is nothing to pass on
      assertThat(gate.generation()).isEqualTo(later);
      assertThat(gate.parked()).isEqualTo(5);
      gate.open();
      waiters.addAll(others);
      for (var w : waiters) {
        assertThat(w.get(10, TimeUnit.SECONDS)).isTrue();
      }
    }
  }

  @Test
  void aWaitThatEndsAtItsBoundIsNotAWakeEvenIfTheGateOpenedForAnother() throws Exception {
    WakeGate gate = new WakeGate();
    long seen = gate.generation();
    try (var pool = Executors.newVirtualThreadPerTaskExecutor()) {
      CompletableFuture<Boolean> first = park(gate, seen, 1, "g", false, pool).getFirst();
      Awaitility.await().until(() -> gate.parked() == 1);
      CompletableFuture<Boolean> second =
          CompletableFuture.supplyAsync(() -> awaitQuietly(gate, seen, 3_000, "g", false), pool);
      Awaitility.await().pollInterval(Duration.ofMillis(5)).until(() -> gate.parked() == 2);
      gate.open(1); // the longest parked is woken
      assertThat(first.get(10, TimeUnit.SECONDS)).isTrue();
      // the other ends at its bound: its backoff keeps growing instead of starting over
      assertThat(second.get(10, TimeUnit.SECONDS)).isFalse();
    }
  }

  @Test
  void aCallerThatLeavesWakesItsOwnWaiterAloneAndLeavesTheGateClosed() throws Exception {
    WakeGate gate = new WakeGate();
    long seen = gate.generation();
    Caller leaving = new Caller();
    try (var pool = Executors.newVirtualThreadPerTaskExecutor()) {
      List<CompletableFuture<Boolean>> others = park(gate, seen, 20, "g", false, pool);
      CompletableFuture<Boolean> left =
          CompletableFuture.supplyAsync(
              () -> {
                try {
                  boolean woken = await(gate, seen, 30, TimeUnit.SECONDS, "g", false, leaving);
                  assertThat(Thread.currentThread().isInterrupted()).isFalse();
                  return woken;
                } catch (InterruptedException e) {
                  throw new IllegalStateException(e);
                }
              },
              pool);
      Awaitility.await().until(() -> gate.parked() == 21);
      leaving.leave();
      assertThat(left.get(10, TimeUnit.SECONDS)).as("not woken by the gate").isFalse();
      // thousands of clients leaving at once must not wake every parked pop each
      assertThat(gate.parked()).isEqualTo(20);
      assertThat(gate.generation()).isEqualTo(seen);
      assertThat(others).noneMatch(CompletableFuture::isDone);
      gate.open();
    }
  }

  @Test
  void aCallerThatLeftBeforeItsPopParkedDoesNotWait() throws Exception {
    WakeGate gate = new WakeGate();
    Caller left = new Caller();
    left.leave();
    assertThat(await(gate, gate.generation(), 30, TimeUnit.SECONDS, "g", false, left)).isFalse();
    assertThat(gate.parked()).isZero();
  }

  @Test
  void aLeaveRacingAWakeLeavesNoInterruptBehindAndLosesNoWake() throws Exception {
    try (var pool = Executors.newVirtualThreadPerTaskExecutor()) {
      for (int i = 0; i < 300; i++) {
        WakeGate gate = new WakeGate();
        long seen = gate.generation();
        Caller leaving = new Caller();
        CompletableFuture<Boolean> left =
            CompletableFuture.supplyAsync(
                () -> {
                  try {
                    boolean woken = await(gate, seen, 10, TimeUnit.SECONDS, "g", false, leaving);
                    // the thread goes on to write the answer: an interrupt would close its socket
                    assertThat(Thread.currentThread().isInterrupted()).isFalse();
                    return woken;
                  } catch (InterruptedException e) {
                    throw new IllegalStateException(e);
                  }
                },
                pool);
        Awaitility.await().pollInterval(Duration.ofMillis(1)).until(() -> gate.parked() == 1);
        CompletableFuture<Boolean> staying =
            CompletableFuture.supplyAsync(() -> awaitQuietly(gate, seen, 5_000, "g", false), pool);
        Awaitility.await().pollInterval(Duration.ofMillis(1)).until(() -> gate.parked() == 2);
        CountDownLatch go = new CountDownLatch(1);
        CompletableFuture<Void> wake = CompletableFuture.runAsync(() -> open(gate, go), pool);
        CompletableFuture<Void> leave =
            CompletableFuture.runAsync(
                () -> {
                  awaitQuietly(go);
                  leaving.leave();
                },
                pool);
        go.countDown();
        wake.get(10, TimeUnit.SECONDS);
        leave.get(10, TimeUnit.SECONDS);
        if (left.get(10, TimeUnit.SECONDS)) {
          gate.passOn(); // as PopService does with a wake its departed pop took
        }
        assertThat(staying.get(10, TimeUnit.SECONDS)).as("the one wake reached a waiter").isTrue();
      }
    }
  }

  @Test
  void aLeaveAfterTheWaitEndedInterruptsNothing() throws Exception {
    WakeGate gate = new WakeGate();
    Caller caller = new Caller();
    assertThat(await(gate, gate.generation(), 1, TimeUnit.MILLISECONDS, "g", false, caller))
        .isFalse();
    caller.leave();
    assertThat(Thread.interrupted()).isFalse();
  }

  private static void open(WakeGate gate, CountDownLatch go) {
    awaitQuietly(go);
    gate.open(1);
  }

  private static void awaitQuietly(CountDownLatch latch) {
    try {
      latch.await();
    } catch (InterruptedException e) {
      throw new IllegalStateException(e);
    }
  }

  private static List<CompletableFuture<Boolean>> park(
      WakeGate gate, long seen, int n, String group, boolean picky, ExecutorService pool) {
    List<CompletableFuture<Boolean>> out = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      out.add(
          CompletableFuture.supplyAsync(
              () -> awaitQuietly(gate, seen, 30_000, group, picky), pool));
    }
    return out;
  }

  private static boolean awaitQuietly(
      WakeGate gate, long seen, long millis, String group, boolean picky) {
    try {
      return await(gate, seen, millis, TimeUnit.MILLISECONDS, group, picky, new Caller());
    } catch (InterruptedException e) {
      throw new IllegalStateException(e);
    }
  }

  /**
   * Parks as a long-poll does and waits for the end of its wait: the answer {@link WakeGate#park}
   * gives at once, or the one it resumes with.
   */
  static boolean await(
      WakeGate gate,
      long seen,
      long timeout,
      TimeUnit unit,
      String group,
      boolean picky,
      Caller caller)
      throws InterruptedException {
    CompletableFuture<Boolean> resumed = new CompletableFuture<>();
    Boolean now = gate.park(seen, timeout, unit, group, picky, caller, resumed::complete);
    if (now != null) {
      return now;
    }
    try {
      return resumed.get();
    } catch (ExecutionException e) {
      throw new IllegalStateException(e);
    }
  }

  @Test
  void aWakePassedOnWithNobodyParkedStillMovesTheGeneration() {
    // a pop looking now may have found the work locked by the one passing on: it looks again
    WakeGate gate = new WakeGate();
    long seen = gate.generation();
    gate.passOn();
    assertThat(gate.generation()).isGreaterThan(seen);
  }
}
