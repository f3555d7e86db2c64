package queen.server.http;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.node.ObjectNode;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import queen.server.TestBroker;
import queen.server.Wire;

/**
 * Long-poll behaviour every candidate path must have: the hot-list and the SQL scan
 * (QUEEN_HOTLIST=0) run the same contract.
 */
abstract class LongPollContract {
  private final ExecutorService clients = Executors.newVirtualThreadPerTaskExecutor();

  abstract TestBroker broker();

  /** How many consumers park at once in {@link #parkedConsumersEachGetOneOfFiftyMessages}. */
  abstract int parkedConsumers();

  @AfterEach
  void closeClients() {
    clients.shutdownNow();
  }

  /** A poll started in the background: its answer, how long it took, when it ended (nanoTime). */
  record Timed(TestBroker.Reply reply, long millis, long endedNanos) {}

  CompletableFuture<Timed> poll(String path) {
    return CompletableFuture.supplyAsync(
        () -> {
          long t0 = System.nanoTime();
          TestBroker.Reply r = broker().get(path);
          long ended = System.nanoTime();
          return new Timed(r, TimeUnit.NANOSECONDS.toMillis(ended - t0), ended);
        },
        clients);
  }

  void awaitParked(String queue, int n) {
    await()
        .atMost(Duration.ofSeconds(20))
        .pollInterval(Duration.ofMillis(50))
        .until(
            () -> broker().metric("queen_queue_parked_consumers", "queue=\"" + queue + "\"") >= n);
  }

  @Test
  void aPushWakesAParkedConsumer() throws Exception {
    CompletableFuture<Timed> parked = poll("/api/v1/pop/queue/wake?wait=true&timeout=20000");
    awaitParked("wake", 1);
    new Wire(broker()).pushNumbered("wake", "p", 0, 1);
    Timed t = parked.get(25, TimeUnit.SECONDS);
    assertThat(t.reply().status()).as("woken before its 20 s deadline").isEqualTo(200);
    assertThat(Wire.numbers(t.reply().json())).containsExactly(0);
  }

  @Test
  void aParkedSinglePartitionPopIsWokenByAPushToItsPartition() throws Exception {
    CompletableFuture<Timed> parked =
        poll("/api/v1/pop/queue/wake-one/partition/mine?wait=true&timeout=20000");
    awaitParked("wake-one", 1);
    new Wire(broker()).pushNumbered("wake-one", "mine", 0, 1);
    assertThat(parked.get(25, TimeUnit.SECONDS).reply().status()).isEqualTo(200);
  }

  @Test
  void anEmptyLongPollAnswers204AtItsDeadline() throws Exception {
    Timed t = poll("/api/v1/pop/queue/quiet-poll?wait=true&timeout=700").get(10, TimeUnit.SECONDS);
    assertThat(t.reply().status()).isEqualTo(204);
    assertThat(t.reply().text()).isEmpty();
    // the upper bound leaves a loaded machine room; the default wait would be 30 s
    assertThat(t.millis()).isBetween(650L, 3_000L);
  }

  @Test
  void parkedConsumersEachGetOneOfFiftyMessagesAndTheRestTimeOut() throws Exception {
    int n = parkedConsumers();
    int timeout = 8_000;
    List<CompletableFuture<Timed>> polls = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      polls.add(poll("/api/v1/pop/queue/crowd?wait=true&timeout=" + timeout));
    }
    awaitParked("crowd", n);
    long parked = System.nanoTime();
    List<ObjectNode> items = new ArrayList<>();
    for (int p = 0; p < 50; p++) {
      items.add(Wire.item("crowd", "p" + p, "crowd-" + p, Wire.object().put("n", p)));
    }
    assertThat(broker().post("/api/v1/push", Wire.items(items)).status()).isEqualTo(201);

    Set<Integer> delivered = new HashSet<>();
    int timedOut = 0;
    for (CompletableFuture<Timed> f : polls) {
      Timed t = f.get(timeout + 10_000L, TimeUnit.MILLISECONDS);
      if (t.reply().status() == 200) {
        List<Integer> ns = Wire.numbers(t.reply().json());
        assertThat(ns).hasSize(1);
        assertThat(delivered.add(ns.getFirst())).as("delivered once: %s", ns).isTrue();
      } else {
        assertThat(t.reply().status()).isEqualTo(204);
        assertThat(t.millis()).as("not answered before the deadline").isGreaterThan(timeout - 50L);
        // measured from when every poll was parked: the last of 2,000 connects may have reached
        // the broker seconds after its client began, and its deadline counts from there
        assertThat(TimeUnit.NANOSECONDS.toMillis(t.endedNanos() - parked))
            .as("answered at the deadline")
            .isLessThan(timeout + 5_000L);
        timedOut++;
      }
    }
    assertThat(delivered).hasSize(50);
    assertThat(timedOut).isEqualTo(n - 50);
  }
}
