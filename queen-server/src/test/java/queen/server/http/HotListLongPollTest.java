package queen.server.http;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import queen.server.TestBroker;
import queen.server.Wire;

/**
 * The long-poll contract on the hot-list path, with a backoff so long that nothing but a wake can
 * deliver within a test: a lost wake would show as a timeout.
 */
class HotListLongPollTest extends LongPollContract {
  @RegisterExtension
  static final TestBroker broker =
      new TestBroker(
          Map.of(
              "POP_WAIT_INITIAL_INTERVAL_MS", "30000",
              "POP_WAIT_MAX_INTERVAL_MS", "30000",
              "DB_POOL_SIZE", "10"));

  @Override
  TestBroker broker() {
    return broker;
  }

  @Override
  int parkedConsumers() {
    return 2_000;
  }

  @Test
  void twoThousandParkedLongPollsCostAlmostNoSql() throws Exception {
    long before = broker.dbCalls();
    List<CompletableFuture<Timed>> polls = new ArrayList<>();
    for (int i = 0; i < 2_000; i++) {
      polls.add(poll("/api/v1/pop/queue/idle?wait=true&timeout=5000"));
    }
    for (CompletableFuture<Timed> f : polls) {
      assertThat(f.get(20, TimeUnit.SECONDS).reply().status()).isEqualTo(204);
    }
    long calls = broker.dbCalls() - before;
    // one poll per backoff interval would be ~10,000 calls at the seed's defaults; the ring
    // answers re-polls from memory and one reseed per interval serves every consumer
    System.out.printf("2,000 parked long-polls for 5 s: %d database calls%n", calls);
    assertThat(calls).isLessThan(50);
  }

  @Test
  void windowBufferDeliversWhenDueThroughTheWheelWithoutRePolling() throws Exception {
    new Wire(broker).configure("held", Wire.object().put("windowBuffer", 1));
    CompletableFuture<Timed> parked = poll("/api/v1/pop/queue/held?wait=true&timeout=20000");
    awaitParked("held", 1);
    long before = broker.dbCalls();
    new Wire(broker).pushNumbered("held", "p", 0, 3);
    Timed t = parked.get(25, TimeUnit.SECONDS);
    assertThat(t.reply().status()).isEqualTo(200);
    assertThat(Wire.numbers(t.reply().json())).containsExactly(0, 1, 2);
    assertThat(t.millis()).isGreaterThanOrEqualTo(1_000L);
    assertThat(broker.dbCalls() - before).as("push, deferred claim, due claim").isLessThan(10);
  }

  @Test
  void delayedProcessingDeliversWhenDueThroughTheWheelWithoutRePolling() throws Exception {
    new Wire(broker).configure("later-wheel", Wire.object().put("delayedProcessing", 1));
    CompletableFuture<Timed> parked = poll("/api/v1/pop/queue/later-wheel?wait=true&timeout=20000");
    awaitParked("later-wheel", 1);
    long before = broker.dbCalls();
    new Wire(broker).pushNumbered("later-wheel", "p", 0, 1);
    Timed t = parked.get(25, TimeUnit.SECONDS);
    assertThat(t.reply().status()).isEqualTo(200);
    assertThat(t.millis()).isGreaterThanOrEqualTo(1_000L);
    assertThat(broker.dbCalls() - before).isLessThan(10);
  }
}
