package queen.client;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * What a client does when the broker answers but gives nothing: a long poll answered empty at once
 * (pops in maintenance) paces its worker, and a buffered push whose send found the broker away, or
 * its token expired, keeps its items without failing the push (a caller retrying it would send them
 * twice).
 */
class QuietFailureTest {
  private static Queen client(String url) {
    return Queen.builder()
        .url(url)
        .retries(1, Duration.ZERO)
        .timeout(Duration.ofSeconds(5))
        .build();
  }

  @Test
  void aLongPollAnsweredEmptyAtOnceIsAskedAgainOnlyAfterAPause() {
    java.util.Map<Integer, Long> arrived = new java.util.concurrent.ConcurrentHashMap<>();
    try (StubServer stub =
            new StubServer(
                n -> {
                  arrived.put(n, System.nanoTime());
                  return new StubServer.Answer(204, "");
                });
        Queen queen = client(stub.url())) {
      Consumer c = queen.queue("paused").timeoutMillis(30_000).consume(batch -> {});
      // the stub counts a request before it notes its arrival
      await().atMost(Duration.ofSeconds(20)).until(() -> arrived.containsKey(11));
      c.stop();
      // timed from the second poll's arrival: the first carries the client's warm-up
      long elapsed = Duration.ofNanos(arrived.get(11) - arrived.get(1)).toMillis();
      assertThat(elapsed)
          .as("ten pauses of 100 ms between eleven polls")
          .isGreaterThanOrEqualTo(900);
    }
  }

  @org.junit.jupiter.params.ParameterizedTest(name = "first answer {0}")
  @org.junit.jupiter.params.provider.ValueSource(ints = {503, 401})
  void aBufferedPushRefusedForNoFaultOfItsItemsKeepsThemAndSendsThemOnce(int firstAnswer) {
    String accepted =
        "[{\"status\":\"queued\",\"transaction_id\":\"a\"},"
            + "{\"status\":\"queued\",\"transaction_id\":\"b\"}]";
    try (StubServer stub =
            new StubServer(
                n ->
                    n == 0
                        ? new StubServer.Answer(firstAnswer, "{\"error\":\"not now\"}")
                        : new StubServer.Answer(201, accepted));
        Queen queen = client(stub.url())) {
      BufferedPush events = queen.queue("events").buffer(2, 50);
      List<PushResult> taken = events.push(Map.of("n", 1), Map.of("n", 2));
      assertThat(taken).extracting(PushResult::status).containsOnly("buffered");
      await()
          .atMost(Duration.ofSeconds(10))
          .until(() -> queen.bufferStats().bufferedMessages() == 0);
      assertThat(stub.requests.get()).as("the failed send, then one that took both").isEqualTo(2);
    }
  }
}
