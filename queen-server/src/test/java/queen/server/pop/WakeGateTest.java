package queen.server.pop;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

class WakeGateTest {

  @Test
  void aWakeThatLandsBeforeTheParkIsNotLost() throws Exception {
    WakeGate gate = new WakeGate();
    long seen = gate.generation(); // read before looking for work
    gate.open(); // a push lands while the pop was busy finding nothing
    assertThat(gate.await(seen, 30, TimeUnit.SECONDS)).isTrue();
  }

  @Test
  void anOpenWakesEveryParkedWaiter() throws Exception {
    WakeGate gate = new WakeGate();
    long seen = gate.generation();
    try (var pool = Executors.newVirtualThreadPerTaskExecutor()) {
      var waiters =
          java.util.stream.IntStream.range(0, 50)
              .mapToObj(
                  i ->
                      CompletableFuture.supplyAsync(
                          () -> {
                            try {
                              return gate.await(seen, 30, TimeUnit.SECONDS);
                            } catch (InterruptedException e) {
                              throw new IllegalStateException(e);
                            }
                          },
                          pool))
              .toList();
      org.awaitility.Awaitility.await().until(() -> gate.parked() == 50);
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
    assertThat(gate.await(gate.generation(), 20, TimeUnit.MILLISECONDS)).isFalse();
  }
}
