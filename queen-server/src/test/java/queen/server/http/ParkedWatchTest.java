package queen.server.http;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.time.Duration;
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
 * Whole-queue long-polls on the hot-list park until a wake or their deadline, with the default
 * backoff (1 s): the ring's watch, not a look by every parked pop, is their floor. The long-poll
 * contract runs here too, since this is the first path where parked pops do not look by themselves.
 */
class ParkedWatchTest extends LongPollContract {
  @RegisterExtension
  static final TestBroker broker = new TestBroker(Map.of("QUEEN_HINTS", "false"));

  /** Long enough to outlast the 3 s window after a slow park of hundreds of pops. */
  private static final int TIMEOUT_MS = 10_000;

  @Override
  TestBroker broker() {
    return broker;
  }

  @Override
  int parkedConsumers() {
    return 200;
  }

  @Test
  void parkedWholeQueuePopsDoNotLookAgainEachBackoffInterval() throws Exception {
    int parked = 300;
    List<CompletableFuture<Timed>> polls = new ArrayList<>();
    for (int i = 0; i < parked; i++) {
      polls.add(poll("/api/v1/pop/queue/quiet?wait=true&timeout=" + TIMEOUT_MS));
    }
    awaitParked("quiet", parked);
    // a look per parked pop and interval would be about 900 in these 3 s
    assertFewLooksForThreeSeconds();
    allAnswer204AtTheirDeadline(polls);
  }

  @Test
  void aParkedSinglePartitionPopOfAnotherGroupDoesNotMakeTheWatchWakeEveryone() throws Exception {
    new Wire(broker).configure("mixed", Wire.object());
    List<CompletableFuture<Timed>> polls = new ArrayList<>();
    for (int i = 0; i < 200; i++) {
      polls.add(poll("/api/v1/pop/queue/mixed?consumerGroup=a&wait=true&timeout=" + TIMEOUT_MS));
    }
    polls.add(
        poll(
            "/api/v1/pop/queue/mixed/partition/p?consumerGroup=b&wait=true&timeout=" + TIMEOUT_MS));
    awaitParked("mixed", 201);
    // the single-partition pop looks once per interval by itself; were its group watched, each
    // watch would wake all 201 (a picky pop is parked): about 1,200 looks in these 3 s
    assertFewLooksForThreeSeconds();
    allAnswer204AtTheirDeadline(polls);
  }

  /**
   * Waited for, so that their last looks (at the deadline) do not count in another test's window.
   */
  private static void allAnswer204AtTheirDeadline(List<CompletableFuture<Timed>> polls)
      throws Exception {
    for (CompletableFuture<Timed> p : polls) {
      assertThat(p.get(TIMEOUT_MS + 20_000L, TimeUnit.MILLISECONDS).reply().status())
          .isEqualTo(204);
    }
  }

  /**
   * Fewer than 30 looks that found nothing, all through the next 3 s, and no wake by the watch:
   * nothing is ready, and no ring of a group with whole-queue pops parked is missing.
   */
  private static void assertFewLooksForThreeSeconds() {
    double before = broker.metric("queen_pop_empty_without_permit_total", "");
    double watchWakes = broker.metric("queen_pop_watch_wakes_total", "");
    await()
        .during(Duration.ofSeconds(3))
        .atMost(Duration.ofSeconds(5))
        .until(() -> broker.metric("queen_pop_empty_without_permit_total", "") - before < 30);
    assertThat(broker.metric("queen_pop_watch_wakes_total", "")).isEqualTo(watchWakes);
  }

  @Test
  void aMessageStoredBehindTheRingsBackReachesAParkedPopWithinAboutAnInterval() throws Exception {
    new Wire(broker).pushNumbered("behind", "warm", 0, 1);
    assertThat(broker.get("/api/v1/pop/queue/behind?autoAck=true").status()).isEqualTo(200);
    // another broker's push with hints off, as a lost hint would leave it: no local wake
    try (var other = broker.startAnother(Map.of("QUEEN_HINTS", "false"))) {
      CompletableFuture<Timed> parked = poll("/api/v1/pop/queue/behind?wait=true&timeout=20000");
      awaitParked("behind", 1);
      long t0 = System.nanoTime();
      TestBroker.Reply pushed =
          broker.post(
              other,
              "/api/v1/push",
              Wire.items(
                  List.of(Wire.item("behind", "cold", "behind-1", Wire.object().put("n", 1)))));
      assertThat(pushed.status()).isEqualTo(201);
      Timed t = parked.get(25, TimeUnit.SECONDS);
      assertThat(t.reply().status()).isEqualTo(200);
      assertThat(t.reply().json().get("messages").get(0).get("transactionId").asText())
          .isEqualTo("behind-1");
      // the watch's reseed, due once a second, finds it; the pop's deadline is 20 s away
      assertThat(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0)).isLessThan(5_000);
    }
  }
}
