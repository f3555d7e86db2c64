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
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Supplier;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import queen.server.Broker;
import queen.server.TestBroker;
import queen.server.Wire;

/**
 * Three brokers on one database behave as one: a push through A wakes a long-poll parked on B at
 * once (and a full batch ends B's minimum pop wait), a switch, a seek and a configure made through
 * A reach B's next pop, a listener cut off by the database comes back, and messages pushed and
 * consumed through all three are delivered once each, in order.
 */
class MeshTest {
  /**
   * Without hints, B would find others' pushes only by its pops' backoff (5 s) or its watch's
   * reseed (half of that, 2.5 s after a pop parks), and read switches every 60 s.
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
        .until(
            () -> broker.metric(b, "queen_queue_parked_consumers", "queue=\"" + queue + "\"") == 1);
    long t0 = System.nanoTime();
    new Wire(broker).pushNumbered(queue, "p", 0, 1);
    HttpResponse<String> r = parked.get(20, TimeUnit.SECONDS);
    long ms = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0);
    assertThat(r.statusCode()).isEqualTo(200);
    return ms;
  }

  @Test
  void aPushThroughOneBrokerWakesALongPollParkedOnAnother() throws Exception {
    long[] ms = new long[5];
    for (int i = 0; i < ms.length; i++) {
      ms[i] = wakeAcross("mesh-wake-" + i);
    }
    java.util.Arrays.sort(ms);
    assertThat(ms[2])
        .as("median of five push-to-pop times across brokers %s ms; B's own floor is 5 s", ms)
        // a fifth of the floor: without the hint each wake waits out most of it
        .isLessThan(1000);
    assertThat(broker.metric(broker.startedBroker(), "queen_hints_sent_total", "")).isPositive();
  }

  @Test
  void aLeaseAckedThroughAnotherBrokerLeavesTheAckRegistryOfTheOneThatIssuedIt() {
    // behind a load balancer acks land anywhere: expiry alone kept them for 15 minutes
    Broker a = broker.startedBroker();
    new Wire(broker).pushNumbered("mesh-registry", "p", 0, 5);
    JsonNode popped =
        broker.get("/api/v1/pop/queue/mesh-registry/partition/p?batch=5&consumerGroup=g").json();
    assertThat(broker.metric(a, "queen_ack_registry_partitions", "")).isEqualTo(1);
    ObjectNode body = Wire.object().put("consumerGroup", "g");
    for (JsonNode m : popped.get("messages")) {
      body.withArray("acknowledgments").add(Wire.ack(m, "completed", null));
    }
    assertThat(broker.post(b, "/api/v1/ack/batch", body).status()).isEqualTo(200);
    await()
        .atMost(Duration.ofSeconds(10))
        .until(() -> broker.metric(a, "queen_ack_registry_partitions", "") == 0);
  }

  @Test
  void aSwitchSetThroughOneBrokerReachesTheNextPopOfAnother() {
    popMaintenanceReaches(broker, b, "mesh-switch");
  }

  /**
   * Pop maintenance switched on through {@code broker} answers B's pops 204 within 5 s, and
   * switched off, 200 again. Every probe is a new consumer group, so a probe that B served before
   * it saw the switch takes nothing from the next one.
   */
  static void popMaintenanceReaches(TestBroker broker, Broker b, String queue) {
    new Wire(broker).pushNumbered(queue, "p", 0, 1);
    AtomicInteger probes = new AtomicInteger();
    Supplier<Integer> probe =
        () ->
            broker
                .get(
                    b,
                    "/api/v1/pop/queue/"
                        + queue
                        + "/partition/p?autoAck=true&consumerGroup=probe-"
                        + probes.incrementAndGet())
                .status();
    broker.post("/api/v1/system/maintenance/pop", Wire.object().put("enabled", true));
    try {
      await().atMost(Duration.ofSeconds(5)).until(() -> probe.get() == 204);
    } finally {
      broker.post("/api/v1/system/maintenance/pop", Wire.object().put("enabled", false));
    }
    await().atMost(Duration.ofSeconds(5)).until(() -> probe.get() == 200);
  }

  @Test
  void aSeekThroughOneBrokerReachesTheNextPopOfAnother() {
    new Wire(broker).pushNumbered("mesh-seek", "p", 0, 3);
    String pop = "/api/v1/pop/queue/mesh-seek?consumerGroup=g&batch=10&autoAck=true";
    assertThat(Wire.numbers(broker.get(b, pop).json())).containsExactly(0, 1, 2);
    assertThat(broker.get(b, pop).status()).as("B knows the group read everything").isEqualTo(204);
    JsonNode seek =
        broker
            .post(
                "/api/v1/consumer-groups/g/queues/mesh-seek/seek",
                Wire.object().put("timestamp", "2000-01-01T00:00:00Z"))
            .json();
    assertThat(seek.get("success").asBoolean()).isTrue();
    // B re-reads its group state within 60 s by itself: only the hint can make this pass
    AtomicReference<TestBroker.Reply> again = new AtomicReference<>();
    await()
        .atMost(Duration.ofSeconds(5))
        .until(
            () -> {
              again.set(broker.get(b, pop));
              return again.get().status() == 200;
            });
    assertThat(Wire.numbers(again.get().json())).containsExactly(0, 1, 2);
  }

  @Test
  void aConfigureThroughOneBrokerReachesTheNextPopOfAnother() throws Exception {
    String queue = "mesh-conf";
    // one sample, so room for a loaded machine; the minimum wait configured below is 3 s
    assertThat(wakeAcross(queue)).as("no minimum wait yet").isLessThan(2_000);
    // B's parked pop, woken by the push, now holds for a fuller batch until the minimum wait ends
    CompletableFuture<HttpResponse<String>> parked = parkForTen(queue, 3_000);
    long t0 = System.nanoTime();
    new Wire(broker).pushNumbered(queue, "q", 0, 1); // "p" is still leased by the first pop
    HttpResponse<String> r = parked.get(30, TimeUnit.SECONDS);
    assertThat(r.statusCode()).isEqualTo(200);
    assertThat(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0))
        .as("held by the minimum wait configured through A")
        .isGreaterThanOrEqualTo(2_000);
  }

  @Test
  void aFullBatchPushedThroughOneBrokerEndsTheMinimumWaitOfAPopOnAnother() throws Exception {
    String queue = "mesh-full";
    CompletableFuture<HttpResponse<String>> parked = parkForTen(queue, 10_000);
    new Wire(broker).pushNumbered(queue, "p", 0, 1);
    await("B holds a pop for 10 while 1 is there: the minimum wait is in force on B")
        .during(Duration.ofSeconds(1))
        .atMost(Duration.ofSeconds(3))
        .until(() -> !parked.isDone());
    long t0 = System.nanoTime();
    new Wire(broker).pushNumbered(queue, "p", 1, 9);
    HttpResponse<String> r = parked.get(30, TimeUnit.SECONDS);
    assertThat(r.statusCode()).isEqualTo(200);
    assertThat(Wire.numbers(TestBroker.JSON.readTree(r.body())))
        .containsExactly(0, 1, 2, 3, 4, 5, 6, 7, 8, 9);
    assertThat(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0))
        .as("the hints tell B that 1 and then 9 arrived: the batch is there")
        .isLessThan(5_000);
  }

  @Test
  void aPushHintStaysReadableByABrokerFromBeforeAmounts() throws Exception {
    java.util.Properties props = new java.util.Properties();
    props.setProperty("user", broker.db().user());
    if (broker.db().password() != null) {
      props.setProperty("password", broker.db().password());
    }
    // counted as a listening broker, so that the others send
    props.setProperty("ApplicationName", queen.server.store.Notifications.LISTENER_NAME);
    try (java.sql.Connection c =
        java.sql.DriverManager.getConnection(broker.db().jdbcUrl(), props)) {
      try (java.sql.Statement st = c.createStatement()) {
        st.execute("listen queen_hints");
      }
      new Wire(broker).pushNumbered("mesh-old", "p", 0, 3);
      org.postgresql.PGConnection pg = c.unwrap(org.postgresql.PGConnection.class);
      AtomicReference<String> seen = new AtomicReference<>();
      await()
          .atMost(Duration.ofSeconds(10))
          .until(
              () -> {
                org.postgresql.PGNotification[] got = pg.getNotifications(200);
                for (org.postgresql.PGNotification n :
                    got == null ? new org.postgresql.PGNotification[0] : got) {
                  List<String> lines = List.of(n.getParameter().split("\n"));
                  int at = lines.indexOf("p\tmesh-old\tp");
                  if (at > 0 && at + 1 < lines.size()) {
                    seen.set(lines.get(at + 1));
                  }
                }
                return seen.get() != null;
              });
      assertThat(seen.get())
          .as("the amounts on a line of their own, after the three fields older brokers read")
          .matches("a\t3\t[0-9]+");
    }
  }

  /** Sets the queue's minimum pop wait through A, then parks a pop of 10 on B. */
  private CompletableFuture<HttpResponse<String>> parkForTen(String queue, int minPopWaitMs) {
    ObjectNode body = Wire.object().put("queue", queue);
    body.putObject("options").put("minPopWaitTime", minPopWaitMs);
    assertThat(broker.post("/api/v1/configure", body).status()).isEqualTo(200);
    CompletableFuture<HttpResponse<String>> parked =
        http.sendAsync(
            HttpRequest.newBuilder(
                    URI.create(
                        url(b)
                            + "/api/v1/pop/queue/"
                            + queue
                            + "?batch=10&wait=true&timeout=30000"))
                .build(),
            HttpResponse.BodyHandlers.ofString());
    await()
        .atMost(Duration.ofSeconds(10))
        .until(
            () -> broker.metric(b, "queen_queue_parked_consumers", "queue=\"" + queue + "\"") == 1);
    return parked;
  }

  @Test
  void aListenerCutOffByTheDatabaseReconnectsAndHintsFlowAgain() throws Exception {
    double before = broker.metric(b, "queen_hints_listener_reconnects_total", "");
    broker.sql(
        "select pg_terminate_backend(pid) from pg_stat_activity"
            + " where application_name = 'queen-hints' and datname = current_database()");
    await()
        .atMost(Duration.ofSeconds(15))
        .until(() -> broker.metric(b, "queen_hints_listener_reconnects_total", "") > before);
    double received = broker.metric(b, "queen_hints_received_total", "");
    // one sample, so room for a loaded machine; the counter says a hint arrived
    assertThat(wakeAcross("mesh-again")).isLessThan(3_000);
    assertThat(broker.metric(b, "queen_hints_received_total", ""))
        .as("hints heard by B again")
        .isGreaterThan(received);
  }

  @Test
  void messagesPushedAndConsumedThroughThreeBrokersArriveOnceInOrderWhileListenersAreCutOff()
      throws Exception {
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
    // mid-run, the database cuts every listener off: they reconnect and nothing is lost
    await().atMost(Duration.ofSeconds(60)).until(() -> delivered.get() >= perProducer);
    double reconnects = broker.metric(b, "queen_hints_listener_reconnects_total", "");
    broker.sql(
        "select pg_terminate_backend(pid) from pg_stat_activity"
            + " where application_name = 'queen-hints' and datname = current_database()");
    for (Thread t : threads) {
      t.join(120_000);
    }
    await()
        .atMost(Duration.ofSeconds(15))
        .until(() -> broker.metric(b, "queen_hints_listener_reconnects_total", "") > reconnects);
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
