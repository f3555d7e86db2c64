package queen.client;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;

import java.io.IOException;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

class TransportTest {
  private static Queen client(String... urls) {
    return Queen.builder()
        .urls(List.of(urls))
        .retries(3, Duration.ofMillis(20))
        .timeout(Duration.ofSeconds(5))
        .build();
  }

  @Test
  void fiveHundredsAreRetriedAndASuccessEndsTheRetries() {
    try (StubServer stub =
            new StubServer(
                n ->
                    n < 2
                        ? new StubServer.Answer(503, "{\"error\":\"busy\"}")
                        : new StubServer.Answer(200, "{\"status\":\"healthy\"}"));
        Queen queen = client(stub.url())) {
      assertThat(queen.admin().health().get("status").asText()).isEqualTo("healthy");
      assertThat(stub.requests.get()).isEqualTo(3);
    }
  }

  // a push gave up 3 s into a window the broker said would last 5 s (helper-142)
  @Test
  void aRetryIsNotSoonerThanTheBrokersRetryAfter() {
    try (StubServer stub =
            new StubServer(
                n ->
                    n == 0
                        ? new StubServer.Answer(
                            503, "{\"error\":\"keys\"}", Map.of("Retry-After", "2"))
                        : new StubServer.Answer(200, "{\"status\":\"healthy\"}"));
        Queen queen = client(stub.url())) {
      long start = System.nanoTime();
      assertThat(queen.admin().health().get("status").asText()).isEqualTo("healthy");
      assertThat(Duration.ofNanos(System.nanoTime() - start))
          .as("the 20 ms pause raised to the 2 s asked for")
          .isGreaterThanOrEqualTo(Duration.ofSeconds(2));
      assertThat(stub.requests.get()).isEqualTo(2);
    }
  }

  // a proxy's "too many requests" or "request timeout" ended a consumer as a refusal would
  @Test
  void aProxysTooManyRequestsOrRequestTimeoutIsRetried() {
    try (StubServer stub =
            new StubServer(
                n ->
                    switch (n) {
                      case 0 -> new StubServer.Answer(429, "{\"error\":\"slow down\"}");
                      case 1 -> new StubServer.Answer(408, "");
                      default -> new StubServer.Answer(200, "{\"status\":\"healthy\"}");
                    });
        Queen queen = client(stub.url())) {
      assertThat(queen.admin().health().get("status").asText()).isEqualTo("healthy");
      assertThat(stub.requests.get()).isEqualTo(3);
    }
  }

  @Test
  void aFourHundredIsThrownAtOnceWithTheBrokersError() {
    try (StubServer stub =
            new StubServer(
                n -> new StubServer.Answer(400, "{\"error\":\"Queue must be a string\"}"));
        Queen queen = client(stub.url())) {
      assertThatThrownBy(() -> queen.queue("q").push(Map.of("a", 1)))
          .isInstanceOf(QueenException.class)
          .hasMessage("Queue must be a string")
          .satisfies(e -> assertThat(((QueenException) e).status()).isEqualTo(400));
      assertThat(stub.requests.get()).isEqualTo(1);
    }
  }

  @Test
  void eachRetryWaitsItsPauseWhicheverBrokerItGoesTo() {
    try (StubServer a = new StubServer(n -> new StubServer.Answer(503, "{\"error\":\"a\"}"));
        StubServer b = new StubServer(n -> new StubServer.Answer(503, "{\"error\":\"b\"}"));
        StubServer c = new StubServer(n -> new StubServer.Answer(503, "{\"error\":\"c\"}"));
        Queen queen =
            Queen.builder()
                .urls(List.of(a.url(), b.url(), c.url()))
                .retries(3, Duration.ofMillis(300))
                .build()) {
      long start = System.nanoTime();
      assertThatThrownBy(() -> queen.admin().health()).isInstanceOf(QueenException.class);
      // before, three brokers took the three attempts one after the other with no pause: a push
      // during a rolling restart failed within milliseconds
      assertThat(Duration.ofNanos(System.nanoTime() - start))
          .isGreaterThanOrEqualTo(Duration.ofMillis(900));
      assertThat(List.of(a.requests.get(), b.requests.get(), c.requests.get())).containsOnly(1);
    }
  }

  @Test
  void retriesGiveUpWithTheLastError() {
    try (StubServer stub = new StubServer(n -> new StubServer.Answer(500, "{\"error\":\"boom\"}"));
        Queen queen = client(stub.url())) {
      assertThatThrownBy(() -> queen.admin().health())
          .isInstanceOf(QueenException.class)
          .hasMessage("boom");
      assertThat(stub.requests.get()).isEqualTo(3);
    }
  }

  @Test
  void aConsumerEndsWhenTheBrokerRefusesItsPop() throws Exception {
    try (StubServer stub =
            new StubServer(n -> new StubServer.Answer(400, "{\"error\":\"Invalid batch\"}"));
        Queen queen = client(stub.url())) {
      Consumer c = queen.queue("q").consume(batch -> {});
      assertThatThrownBy(() -> c.await(Duration.ofSeconds(10)))
          .isInstanceOf(QueenException.class)
          .hasMessage("Invalid batch");
      assertThat(c.isRunning()).isFalse();
    }
  }

  @Test
  void aConsumerOfAnUnreachableBrokerBacksOffInsteadOfSpinning() throws Exception {
    AtomicInteger connections = new AtomicInteger();
    try (ServerSocket refusing = new ServerSocket(0)) {
      Thread.ofVirtual()
          .start(
              () -> {
                while (!refusing.isClosed()) {
                  try (Socket s = refusing.accept()) {
                    connections.incrementAndGet();
                  } catch (IOException closed) {
                    return;
                  }
                }
              });
      try (Queen queen = client("http://127.0.0.1:" + refusing.getLocalPort())) {
        Consumer c = queen.queue("q").concurrency(4).consume(batch -> {});
        await().atMost(Duration.ofSeconds(5)).until(() -> connections.get() > 0);
        await()
            .during(Duration.ofSeconds(3))
            .atMost(Duration.ofSeconds(4))
            .until(() -> connections.get() <= 100); // a busy loop would make thousands
        c.stop();
        assertThat(c.isRunning()).isFalse();
      }
    }
  }

  @Test
  void anAnswerWhoseBodyStopsComingFailsInsteadOfHoldingTheCaller() throws Exception {
    CountDownLatch release = new CountDownLatch(1);
    try (ServerSocket stalling = new ServerSocket(0)) {
      Thread.ofVirtual()
          .start(
              () -> {
                try (Socket s = stalling.accept()) {
                  s.getOutputStream()
                      .write(
                          "HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\n["
                              .getBytes(StandardCharsets.US_ASCII));
                  s.getOutputStream().flush();
                  release.await(); // the host gone mid-answer: nothing more comes
                } catch (IOException | InterruptedException e) {
                  // the test ended
                }
              });
      try (Queen queen =
          Queen.builder()
              .url("http://127.0.0.1:" + stalling.getLocalPort())
              .retries(1, Duration.ZERO)
              .timeout(Duration.ofSeconds(1))
              .build()) {
        assertTimeoutPreemptively(
            Duration.ofSeconds(20),
            () ->
                assertThatThrownBy(() -> queen.admin().health())
                    .isInstanceOfSatisfying(
                        QueenException.class, e -> assertThat(e.retryable()).isTrue())
                    .hasMessageContaining("did not end in time"));
      } finally {
        release.countDown();
      }
    }
  }

  @Test
  void aClosedClientRefusesRequestsAsNothingWorthRetrying() {
    try (StubServer stub =
        new StubServer(n -> new StubServer.Answer(200, "{\"status\":\"healthy\"}"))) {
      Queen queen = client(stub.url());
      queen.close();
      assertThatThrownBy(() -> queen.admin().health())
          .isInstanceOf(IllegalStateException.class)
          .hasMessageContaining("closed");
      assertThat(stub.requests.get()).isZero();
    }
  }

  @Test
  void aConsumerWithoutAWaitPausesBetweenEmptyAnswers() throws Exception {
    try (StubServer stub = new StubServer(n -> new StubServer.Answer(204, ""));
        Queen queen = client(stub.url())) {
      Consumer c = queen.queue("q").timeoutMillis(0).consume(batch -> {});
      await().atMost(Duration.ofSeconds(5)).until(() -> stub.requests.get() > 0);
      int before = stub.requests.get();
      await()
          .during(Duration.ofSeconds(1))
          .atMost(Duration.ofSeconds(2))
          .until(() -> stub.requests.get() - before <= 20); // 100 ms apart: about 10
      c.stop();
    }
  }

  @Test
  void sessionsRememberABrokerForABoundedNumberOfKeys() {
    Nodes nodes = new Nodes(List.of("http://a", "http://b"), LoadBalancing.SESSION, 128, 0);
    String first = nodes.order("orders:customer-0:billing").getFirst();
    assertThat(nodes.order("orders:customer-0:billing").getFirst()).isEqualTo(first);
    for (int i = 1; i <= Nodes.MAX_SESSIONS; i++) {
      nodes.order("orders:customer-" + i + ":billing");
    }
    // one key made room: the others keep their broker
    assertThat(nodes.sessions()).isEqualTo(Nodes.MAX_SESSIONS);
  }

  @Test
  void severalBrokersFailOverAndTheFailedOneIsLeftOutUntilItsRetryTime() {
    try (StubServer down = new StubServer(n -> new StubServer.Answer(503, "{\"error\":\"down\"}"));
        StubServer up =
            new StubServer(n -> new StubServer.Answer(200, "{\"status\":\"healthy\"}"));
        Queen queen =
            Queen.builder()
                .url(down.url())
                .url(up.url())
                .loadBalancing(LoadBalancing.ROUND_ROBIN)
                .healthRetryAfter(Duration.ofMinutes(1))
                .build()) {
      for (int i = 0; i < 6; i++) {
        assertThat(queen.admin().health().get("status").asText()).isEqualTo("healthy");
      }
      assertThat(down.requests.get()).as("tried once, then left out").isEqualTo(1);
      assertThat(up.requests.get()).isEqualTo(6);
    }
  }
}
