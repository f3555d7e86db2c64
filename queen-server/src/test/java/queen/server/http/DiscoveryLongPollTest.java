package queen.server.http;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import queen.server.TestBroker;
import queen.server.Wire;

/**
 * Discovery long-polls (by namespace): a push wakes one parked discovery pop per filter and group,
 * not all of them, and the watch is the floor under what no push announces.
 */
class DiscoveryLongPollTest {
  @RegisterExtension static final TestBroker broker = new TestBroker();
  private final ExecutorService clients = Executors.newVirtualThreadPerTaskExecutor();

  private static final List<String> QUEUES = List.of("count.a.x", "count.b.x", "count.c.x");
  private static final int PRODUCERS = 4;
  private static final int PUSHES = 150;
  private static final int PER_PUSH = 2;
  private static final int TOTAL = PRODUCERS * PUSHES * PER_PUSH;
  private static final int CONSUMERS = 16;

  @AfterEach
  void closeClients() {
    clients.shutdownNow();
  }

  @Test
  void longPollingDiscoveryConsumersGetEveryMessageOnceInOrderWhileProducersPush()
      throws Exception {
    Wire wire = new Wire(broker); // the queues' namespace, count, comes from their names
    Map<String, List<Integer>> perPartition = new ConcurrentHashMap<>();
    AtomicInteger delivered = new AtomicInteger();
    AtomicInteger failures = new AtomicInteger();
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(90);
    try (ExecutorService pool = Executors.newVirtualThreadPerTaskExecutor()) {
      List<Future<?>> all = new ArrayList<>();
      for (int c = 0; c < CONSUMERS; c++) {
        all.add(
            pool.submit(
                () -> {
                  while (delivered.get() < TOTAL && System.nanoTime() < deadline) {
                    TestBroker.Reply r =
                        broker.get("/api/v1/pop?namespace=count&batch=5&wait=true&timeout=2000");
                    if (r.status() == 204) {
                      continue;
                    }
                    if (r.status() != 200) {
                      failures.incrementAndGet();
                      continue;
                    }
                    JsonNode body = r.json();
                    for (JsonNode m : body.get("messages")) {
                      perPartition
                          .computeIfAbsent(
                              m.get("queue").asText() + "/" + m.get("partition").asText(),
                              k -> Collections.synchronizedList(new ArrayList<>()))
                          .add(m.get("data").get("n").asInt());
                    }
                    if (wire.ackAll(body).toString().contains("\"success\":false")) {
                      failures.incrementAndGet();
                    }
                    delivered.addAndGet(body.get("messages").size());
                  }
                  return null;
                }));
      }
      for (int p = 0; p < PRODUCERS; p++) {
        int producer = p;
        all.add(
            pool.submit(
                () -> {
                  // each producer owns its partitions, so their numbers rise in push order
                  int[] next = new int[QUEUES.size()];
                  for (int i = 0; i < PUSHES; i++) {
                    int q = ThreadLocalRandom.current().nextInt(QUEUES.size());
                    wire.pushNumbered(QUEUES.get(q), "w" + producer, next[q], PER_PUSH);
                    next[q] += PER_PUSH;
                  }
                  return null;
                }));
      }
      for (Future<?> f : all) {
        f.get();
      }
    }
    assertThat(failures.get()).isZero();
    assertThat(delivered.get()).as("every message, before the deadline").isEqualTo(TOTAL);
    int counted = 0;
    for (Map.Entry<String, List<Integer>> e : perPartition.entrySet()) {
      List<Integer> numbers = e.getValue();
      for (int i = 0; i < numbers.size(); i++) {
        assertThat(numbers.get(i)).as("%s, in order, each once", e.getKey()).isEqualTo(i);
      }
      counted += numbers.size();
    }
    assertThat(counted).isEqualTo(TOTAL);
  }

  @Test
  void parkedDiscoveryPopsCostAboutOneQueryPerTickNotOneEachAndFindAnExpiredLease()
      throws Exception {
    int parked = 100;
    List<CompletableFuture<Timed>> idle = new ArrayList<>();
    for (int i = 0; i < parked; i++) {
      idle.add(poll("/api/v1/pop?namespace=quiet&wait=true&timeout=20000"));
    }
    await()
        .atMost(Duration.ofSeconds(20))
        .pollInterval(Duration.ofMillis(50))
        .until(() -> broker.metric("queen_pop_discovery_parked_consumers", "") >= parked);
    ObjectNode configure = Wire.object().put("queue", "lapsing").put("namespace", "lapse");
    configure.set("options", Wire.object().put("leaseTime", 2));
    assertThat(broker.post("/api/v1/configure", configure).status()).isEqualTo(200);
    new Wire(broker).pushNumbered("lapsing", "p", 0, 1);
    TestBroker.Reply leased = broker.get("/api/v1/pop?namespace=lapse");
    assertThat(Wire.numbers(leased.json())).as("leased for 2 s and never acked").containsExactly(0);
    long before = broker.dbCalls();
    // nothing but the watch tells a parked discovery pop that a lease ran out
    Timed expired =
        poll("/api/v1/pop?namespace=lapse&wait=true&timeout=15000").get(20, TimeUnit.SECONDS);
    assertThat(expired.reply().status()).isEqualTo(200);
    assertThat(Wire.numbers(expired.reply().json())).containsExactly(0);
    assertThat(expired.millis())
        .as("found by the watch, not by a last look at the deadline")
        .isLessThan(10_000);
    long calls = broker.dbCalls() - before;
    // looking once per backoff bound each, the 100 idle pops would pass 100 queries a second
    assertThat(calls)
        .as("queries in %d ms with %d discovery pops parked", expired.millis(), parked)
        .isLessThan(20 + expired.millis() / 100);
    assertThat(idle).as("still parked").noneMatch(CompletableFuture::isDone);
  }

  /** A poll started in the background: its answer and how long it took. */
  private record Timed(TestBroker.Reply reply, long millis) {}

  private CompletableFuture<Timed> poll(String path) {
    return CompletableFuture.supplyAsync(
        () -> {
          long t0 = System.nanoTime();
          TestBroker.Reply r = broker.get(path);
          return new Timed(r, TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0));
        },
        clients);
  }
}
