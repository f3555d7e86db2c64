package queen.server.mesh;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import queen.server.Broker;
import queen.server.TestBroker;
import queen.server.Wire;

/**
 * Three brokers on one database behave as one: a push through A wakes a long-poll parked on B at
 * once, a switch set through A reaches B's next pop, a listener cut off by the database comes back,
 * and messages pushed and consumed through all three are delivered once each, in order.
 */
class MeshTest {
  /**
   * Without hints, B's parked pops would look again only every 5 s and read switches every 60 s.
   */
  static final Map<String, String> SLOW_FLOOR =
      Map.of(
          "POP_WAIT_INITIAL_INTERVAL_MS", "5000",
          "POP_WAIT_MAX_INTERVAL_MS", "5000",
          "QUEEN_STATE_REFRESH_MS", "60000");

  @RegisterExtension static final TestBroker broker = new TestBroker(SLOW_FLOOR);
  static Broker b;
  static Broker c;
  private final HttpClient http = HttpClient.newHttpClient();

  @BeforeAll
  static void start() {
    b = broker.startAnother(SLOW_FLOOR);
    c = broker.startAnother(SLOW_FLOOR);
  }

  @AfterAll
  static void stop() {
    b.close();
    c.close();
  }

  private static String url(Broker x) {
    return "http://127.0.0.1:" + x.port();
  }

  private static double metric(Broker x, String name, String labels) {
    double sum = 0;
    for (String line : broker.get(x, "/metrics/prometheus").text().split("\n")) {
      if ((line.startsWith(name + "{") || line.startsWith(name + " ")) && line.contains(labels)) {
        sum += Double.parseDouble(line.substring(line.lastIndexOf(' ') + 1));
      }
    }
    return sum;
  }

  private CompletableFuture<HttpResponse<String>> park(Broker on, String queue) {
    return http.sendAsync(
        HttpRequest.newBuilder(
                URI.create(url(on) + "/api/v1/pop/queue/" + queue + "?wait=true&timeout=20000"))
            .build(),
        HttpResponse.BodyHandlers.ofString());
  }

  /** Parks a pop on B, pushes through A, and answers how long the pop took to come back. */
  private long wakeAcross(String queue) throws Exception {
    new Wire(broker).configure(queue, Wire.object());
    CompletableFuture<HttpResponse<String>> parked = park(b, queue);
    await()
        .atMost(Duration.ofSeconds(10))
        .until(() -> metric(b, "queen_queue_parked_consumers", "queue=\"" + queue + "\"") == 1);
    long t0 = System.nanoTime();
    new Wire(broker).pushNumbered(queue, "p", 0, 1);
    HttpResponse<String> r = parked.get(20, TimeUnit.SECONDS);
    long ms = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0);
    assertThat(r.statusCode()).isEqualTo(200);
    return ms;
  }

  @Test
  void aPushThroughOneBrokerWakesALongPollParkedOnAnother() throws Exception {
    assertThat(wakeAcross("mesh-wake"))
        .as("woken by the hint, not by B's 5 s backoff")
        .isLessThan(1_000);
    assertThat(metric(broker.startedBroker(), "queen_hints_sent_total", "")).isPositive();
  }

  @Test
  void aSwitchSetThroughOneBrokerReachesTheNextPopOfAnother() throws Exception {
    new Wire(broker).pushNumbered("mesh-switch", "p", 0, 1);
    broker.post("/api/v1/system/maintenance/pop", Wire.object().put("enabled", true));
    try {
      await()
          .atMost(Duration.ofSeconds(5))
          .until(
              () ->
                  broker.get(b, "/api/v1/pop/queue/mesh-switch/partition/p?batch=1").status()
                      == 204);
    } finally {
      broker.post("/api/v1/system/maintenance/pop", Wire.object().put("enabled", false));
    }
    await()
        .atMost(Duration.ofSeconds(5))
        .until(
            () ->
                broker
                        .get(b, "/api/v1/pop/queue/mesh-switch/partition/p?batch=1&autoAck=true")
                        .status()
                    == 200);
  }

  @Test
  void aListenerCutOffByTheDatabaseReconnectsAndHintsFlowAgain() throws Exception {
    double before = metric(b, "queen_hints_listener_reconnects_total", "");
    broker.sql(
        "select pg_terminate_backend(pid) from pg_stat_activity"
            + " where application_name = 'queen-hints' and datname = current_database()");
    await()
        .atMost(Duration.ofSeconds(15))
        .until(() -> metric(b, "queen_hints_listener_reconnects_total", "") > before);
    assertThat(wakeAcross("mesh-again")).isLessThan(1_000);
  }

  @Test
  void messagesPushedAndConsumedThroughThreeBrokersArriveOnceInOrder() throws Exception {
    List<Broker> all = List.of(broker.startedBroker(), b, c);
    int perProducer = 300;
    Map<String, List<Integer>> seen = new ConcurrentHashMap<>();
    AtomicInteger delivered = new AtomicInteger();
    List<Thread> threads = new ArrayList<>();
    for (int i = 0; i < 3; i++) {
      Broker via = all.get(i);
      int producer = i;
      threads.add(
          Thread.ofVirtual()
              .start(
                  () -> {
                    for (int n = 0; n < perProducer; n++) {
                      ObjectNode item =
                          Wire.item(
                              "mesh-all",
                              "p" + producer,
                              "m-" + producer + "-" + n,
                              Wire.object().put("n", n));
                      assertThat(
                              broker.post(via, "/api/v1/push", Wire.items(List.of(item))).status())
                          .isEqualTo(201);
                    }
                  }));
    }
    for (int i = 0; i < 3; i++) {
      Broker via = all.get(i);
      threads.add(
          Thread.ofVirtual()
              .start(
                  () -> {
                    while (delivered.get() < 3 * perProducer) {
                      try {
                        HttpResponse<String> r =
                            http.send(
                                HttpRequest.newBuilder(
                                        URI.create(
                                            url(via)
                                                + "/api/v1/pop/queue/mesh-all?consumerGroup=g&batch=20"
                                                + "&wait=true&timeout=1000"))
                                    .build(),
                                HttpResponse.BodyHandlers.ofString());
                        if (r.statusCode() != 200) {
                          continue;
                        }
                        JsonNode popped = TestBroker.JSON.readTree(r.body());
                        for (JsonNode m : popped.get("messages")) {
                          seen.computeIfAbsent(
                                  m.get("partition").asText(),
                                  k -> java.util.Collections.synchronizedList(new ArrayList<>()))
                              .add(m.at("/data/n").asInt());
                          delivered.incrementAndGet();
                        }
                        new Wire(broker).ackAll(popped);
                      } catch (IOException e) {
                        throw new IllegalStateException(e);
                      } catch (InterruptedException e) {
                        return;
                      }
                    }
                  }));
    }
    for (Thread t : threads) {
      t.join(120_000);
    }
    assertThat(delivered.get()).isEqualTo(3 * perProducer);
    assertThat(seen).hasSize(3);
    for (var e : seen.entrySet()) {
      List<Integer> expected = new ArrayList<>();
      for (int n = 0; n < perProducer; n++) {
        expected.add(n);
      }
      assertThat(e.getValue()).as(e.getKey()).isEqualTo(expected);
    }
  }
}
