package queen.server.http;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.io.IOException;
import java.io.OutputStream;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledOnOs;
import org.junit.jupiter.api.condition.OS;
import org.junit.jupiter.api.extension.RegisterExtension;
import queen.server.TestBroker;
import queen.server.Wire;

/**
 * A long-poll whose client has gone claims nothing: woken by a push, it would lease the message to
 * a closed connection, where the message waits out the lease (or with autoAck is lost). The broker
 * reads the kernel's TCP table, so this holds on Linux only.
 */
@EnabledOnOs(OS.LINUX)
class DepartedLongPollTest {
  @RegisterExtension
  static final TestBroker broker = new TestBroker(Map.of("QUEEN_DEPARTURE_SCAN_MS", "100"));

  private static final ExecutorService clients = Executors.newVirtualThreadPerTaskExecutor();

  @AfterAll
  static void stopClients() {
    clients.shutdownNow();
  }

  @Test
  void aLongPollWhoseClientClosedLeavesTheMessageToTheNextPop() throws Exception {
    assertAPushAfterTheClientLeftGoesToTheNextPop("closed", false);
  }

  @Test
  void aLongPollWhoseClientResetLeavesTheMessageToTheNextPop() throws Exception {
    assertAPushAfterTheClientLeftGoesToTheNextPop("reset", true);
  }

  @Test
  void aLongPollWhoseClientStaysIsStillAnsweredAfterOthersLeft() throws Exception {
    CompletableFuture<TestBroker.Reply> staying =
        CompletableFuture.supplyAsync(
            () -> broker.get("/api/v1/pop/queue/stays?wait=true&timeout=60000&autoAck=true"),
            clients);
    awaitParked("stays", 1);
    double departedBefore = departed();
    // a reset connection needs two reads without it: the staying pop was read present meanwhile
    try (Socket leaving = park("stays", 2)) {
      leaving.setSoLinger(true, 0);
    }
    await().atMost(Duration.ofSeconds(20)).until(() -> departed() > departedBefore);
    assertThat(parked("stays")).isEqualTo(1);

    new Wire(broker).pushNumbered("stays", "p", 7, 1);
    TestBroker.Reply reply = staying.get(20, TimeUnit.SECONDS);
    assertThat(reply.status()).isEqualTo(200);
    assertThat(Wire.numbers(reply.json())).containsExactly(7);
  }

  @Test
  void aHundredClientsLeavingAtOnceLoseNoMessageAndTheStayingGetEachOnce() throws Exception {
    String queue = "crowd";
    int leaving = 100;
    int stayingConsumers = 20;
    int messages = 300;
    List<Socket> gone = new ArrayList<>();
    for (int i = 0; i < leaving; i++) {
      gone.add(park(queue, i + 1));
    }
    Set<Integer> received = ConcurrentHashMap.newKeySet();
    AtomicInteger duplicates = new AtomicInteger();
    AtomicBoolean stop = new AtomicBoolean();
    List<CompletableFuture<Void>> consumers = new ArrayList<>();
    for (int c = 0; c < stayingConsumers; c++) {
      consumers.add(
          CompletableFuture.runAsync(
              () -> {
                while (!stop.get()) {
                  TestBroker.Reply r =
                      broker.get(
                          "/api/v1/pop/queue/" + queue + "?wait=true&timeout=2000&autoAck=true");
                  if (r.status() == 200) {
                    for (int n : Wire.numbers(r.json())) {
                      if (!received.add(n)) {
                        duplicates.incrementAndGet();
                      }
                    }
                  }
                }
              },
              clients));
    }
    await().atMost(Duration.ofSeconds(20)).until(() -> parked(queue) >= leaving + 1);
    double departedBefore = departed();
    for (int i = 0; i < leaving; i++) {
      if (i % 2 == 1) {
        gone.get(i).setSoLinger(true, 0); // half reset, half close
      }
      gone.get(i).close();
    }
    await().atMost(Duration.ofSeconds(30)).until(() -> departed() >= departedBefore + leaving);
    Wire wire = new Wire(broker);
    for (int p = 0; p < 30; p++) {
      wire.pushNumbered(queue, "p" + p, p * 10, messages / 30);
    }
    try {
      // autoAck: a message claimed by a departed pop would be lost for good
      await().atMost(Duration.ofSeconds(60)).until(() -> received.size() == messages);
    } finally {
      stop.set(true);
    }
    for (CompletableFuture<Void> c : consumers) {
      c.get(20, TimeUnit.SECONDS);
    }
    assertThat(duplicates.get()).isZero();
    assertThat(departed()).isEqualTo(departedBefore + leaving);
  }

  /**
   * A long-poll on another queue stays parked meanwhile: a reset connection is missed only by a
   * read that finds another watched one.
   */
  private static void assertAPushAfterTheClientLeftGoesToTheNextPop(String queue, boolean reset)
      throws Exception {
    double departedBefore = departed();
    try (Socket staying = park(queue + "-other", 1)) {
      try (Socket client = park(queue, 1)) {
        if (reset) {
          client.setSoLinger(true, 0); // close() sends RST instead of FIN
        }
      }
      // the departure is counted just after the parked gauge drops, on another thread
      await()
          .atMost(Duration.ofSeconds(20))
          .until(() -> parked(queue) == 0 && departed() == departedBefore + 1);
      assertThat(parked(queue + "-other")).isEqualTo(1);
    }
    // gone before the next test counts departures
    await().atMost(Duration.ofSeconds(20)).until(() -> parked(queue + "-other") == 0);

    new Wire(broker).pushNumbered(queue, "p", 1, 1);
    // the departed pop, had it stayed parked, would have been woken and taken the message
    TestBroker.Reply next = broker.get("/api/v1/pop/queue/" + queue + "?batch=10");
    assertThat(next.status()).isEqualTo(200);
    assertThat(Wire.numbers(next.json())).containsExactly(1);
  }

  /** A long-poll sent over a socket of its own, parked as the {@code n}th on the queue. */
  private static Socket park(String queue, int n) throws IOException {
    Socket s = new Socket("127.0.0.1", broker.port());
    OutputStream out = s.getOutputStream();
    out.write(
        ("GET /api/v1/pop/queue/"
                + queue
                + "?wait=true&timeout=60000&autoAck=true HTTP/1.1\r\nHost: test\r\n\r\n")
            .getBytes(StandardCharsets.US_ASCII));
    out.flush();
    awaitParked(queue, n);
    return s;
  }

  private static void awaitParked(String queue, int n) {
    await().atMost(Duration.ofSeconds(20)).until(() -> parked(queue) >= n);
  }

  private static double parked(String queue) {
    return broker.metric("queen_queue_parked_consumers", "queue=\"" + queue + "\"");
  }

  private static double departed() {
    return broker.metric("queen_pop_departed_total", "");
  }
}
