package queen.server.http;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.node.ObjectNode;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
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
      // quiet timers: the tests count their requests' database calls
      new TestBroker(
          TestBroker.quiet(
              Map.of(
                  "POP_WAIT_INITIAL_INTERVAL_MS", "30000",
                  "POP_WAIT_MAX_INTERVAL_MS", "30000",
                  "DB_POOL_SIZE", "10")));

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

  @Test
  void aLoweredDelayTakesEffectAtOnceForAPartitionItsGateHeld() throws Exception {
    Wire wire = new Wire(broker);
    wire.configure("lowered", Wire.object().put("delayedProcessing", 3600));
    wire.pushNumbered("lowered", "p", 0, 1);
    assertThat(broker.get("/api/v1/pop/queue/lowered").status())
        .as("an hour's gate")
        .isEqualTo(204);
    CompletableFuture<Timed> parked = poll("/api/v1/pop/queue/lowered?wait=true&timeout=20000");
    awaitParked("lowered", 1);
    wire.configure("lowered", Wire.object().put("delayedProcessing", 0));
    Timed t = parked.get(25, TimeUnit.SECONDS);
    assertThat(t.reply().status()).as("not at the gate's old time").isEqualTo(200);
    assertThat(Wire.numbers(t.reply().json())).containsExactly(0);
  }

  @Test
  void aTrickleOfPushesWakesAboutOneParkedPopPerMessageNotEveryParkedPop() throws Exception {
    int parked = 500;
    int messages = 40;
    int timeout = 15_000;
    List<CompletableFuture<Timed>> polls = new ArrayList<>();
    for (int i = 0; i < parked; i++) {
      polls.add(poll("/api/v1/pop/queue/trickle?wait=true&timeout=" + timeout));
    }
    awaitParked("trickle", parked);
    // waking every parked pop per push would be about parked x messages (20,000 here)
    trickle("trickle", messages, polls, timeout);
  }

  @Test
  void aTrickleOfPushesWakesAboutOneParkedDiscoveryPopPerMessageNotEveryOne() throws Exception {
    // each woken discovery pop looks in SQL: waking all of them cost a query each per push
    int parked = 200;
    int messages = 20;
    int timeout = 15_000;
    ObjectNode configure = Wire.object().put("queue", "found").put("namespace", "herd");
    configure.set("options", Wire.object());
    assertThat(broker.post("/api/v1/configure", configure).status()).isEqualTo(200);
    List<CompletableFuture<Timed>> polls = new ArrayList<>();
    for (int i = 0; i < parked; i++) {
      polls.add(poll("/api/v1/pop?namespace=herd&wait=true&timeout=" + timeout));
    }
    await()
        .atMost(Duration.ofSeconds(20))
        .pollInterval(Duration.ofMillis(50))
        .until(() -> broker.metric("queen_pop_discovery_parked_consumers", "") >= parked);
    trickle("found", messages, polls, timeout);
  }

  /**
   * Pushes {@code messages} to the queue one at a time, each to its own partition, each woken for
   * before the next; every message goes to exactly one of {@code polls}, at about one wake each.
   */
  private void trickle(
      String queue, int messages, List<CompletableFuture<Timed>> polls, int timeout)
      throws Exception {
    double wakesBefore = broker.metric("queen_pop_wakes_total", "");
    Wire wire = new Wire(broker);
    for (int m = 0; m < messages; m++) {
      wire.pushNumbered(queue, "p" + m, m, 1);
      int served = m + 1;
      await()
          .atMost(Duration.ofSeconds(10))
          .until(() -> polls.stream().filter(CompletableFuture::isDone).count() == served);
    }
    Set<Integer> delivered = new HashSet<>();
    for (CompletableFuture<Timed> f : polls) {
      Timed t = f.get(timeout + 10_000L, TimeUnit.MILLISECONDS);
      if (t.reply().status() == 200) {
        for (int n : Wire.numbers(t.reply().json())) {
          assertThat(delivered.add(n)).as("delivered once: %s", n).isTrue();
        }
      } else {
        assertThat(t.reply().status()).isEqualTo(204);
      }
    }
    assertThat(delivered).hasSize(messages);
    double wakes = broker.metric("queen_pop_wakes_total", "") - wakesBefore;
    assertThat(wakes).as("wakes for %d messages", messages).isLessThan(4.0 * messages);
  }

  @Test
  void withTwoGroupsParkedOnAQueueEachGroupIsWokenForEveryMessage() throws Exception {
    int perGroup = 50;
    int messages = 10;
    int timeout = 15_000;
    Map<String, List<CompletableFuture<Timed>>> polls = new java.util.TreeMap<>();
    for (String group : List.of("a", "b")) {
      List<CompletableFuture<Timed>> mine = new ArrayList<>();
      for (int i = 0; i < perGroup; i++) {
        mine.add(
            poll(
                "/api/v1/pop/queue/two-groups?consumerGroup="
                    + group
                    + "&wait=true&timeout="
                    + timeout));
      }
      polls.put(group, mine);
    }
    awaitParked("two-groups", 2 * perGroup);
    Wire wire = new Wire(broker);
    for (int m = 0; m < messages; m++) {
      wire.pushNumbered("two-groups", "p" + m, m, 1);
      int served = m + 1;
      // a wake meant for one group's pop must not be spent on the other's
      for (List<CompletableFuture<Timed>> mine : polls.values()) {
        await()
            .atMost(Duration.ofSeconds(10))
            .until(() -> mine.stream().filter(CompletableFuture::isDone).count() == served);
      }
    }
    for (List<CompletableFuture<Timed>> mine : polls.values()) {
      Set<Integer> delivered = new HashSet<>();
      for (CompletableFuture<Timed> f : mine) {
        Timed t = f.get(timeout + 10_000L, TimeUnit.MILLISECONDS);
        if (t.reply().status() == 200) {
          for (int n : Wire.numbers(t.reply().json())) {
            assertThat(delivered.add(n)).as("delivered once per group: %s", n).isTrue();
          }
        }
      }
      assertThat(delivered).hasSize(messages);
    }
  }
}
