package queen.server.http;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.http.HttpRequest;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import queen.server.TestBroker;

class HttpBasicsTest {
  @RegisterExtension
  static final TestBroker broker =
      new TestBroker(TestBroker.quiet(Map.of("MAX_BODY_BYTES", "4096")));

  @Test
  void aFloodOfHealthChecksWhichNeedNoTokenCostsTheDatabaseAPingASecond() throws Exception {
    broker.get("/health");
    long before = broker.dbCalls();
    long started = System.nanoTime();
    try (ExecutorService pool = Executors.newVirtualThreadPerTaskExecutor()) {
      List<Future<Integer>> checks = new ArrayList<>();
      for (int i = 0; i < 2_000; i++) {
        checks.add(pool.submit(() -> broker.get("/health").status()));
      }
      for (Future<Integer> f : checks) {
        assertThat(f.get()).isEqualTo(200);
      }
    }
    // a ping per second begun, and one more: without the shared ping, some 2,000
    long seconds = TimeUnit.NANOSECONDS.toSeconds(System.nanoTime() - started) + 1;
    assertThat(broker.dbCalls() - before).isLessThanOrEqualTo(seconds + 1);
  }

  @Test
  void everyAnswerCarriesCorsHeaders() {
    TestBroker.Reply r = broker.get("/health");
    assertThat(r.headers().firstValue("access-control-allow-origin")).hasValue("*");
    assertThat(r.headers().firstValue("access-control-allow-methods"))
        .hasValue("GET, POST, PUT, DELETE, OPTIONS");
    assertThat(r.headers().firstValue("access-control-allow-headers"))
        .hasValue("Content-Type, Authorization");
  }

  @Test
  void optionsAnswers200WithNoBody() {
    TestBroker.Reply r =
        broker.send(
            HttpRequest.newBuilder(broker.uri("/api/v1/push"))
                .method("OPTIONS", HttpRequest.BodyPublishers.noBody())
                .build());
    assertThat(r.status()).isEqualTo(200);
    assertThat(r.text()).isEmpty();
    assertThat(r.headers().firstValue("access-control-allow-origin")).hasValue("*");
  }

  @Test
  void unknownPathsAreAJson404() {
    TestBroker.Reply r = broker.get("/api/v1/nothing-here");
    assertThat(r.status()).isEqualTo(404);
    assertThat(r.headers().firstValue("content-type")).hasValue("application/json");
    assertThat(r.json().get("error").asText()).isEqualTo("Not found");
  }

  @Test
  void aBodyOverTheLimitIsAJson413() {
    String big = "{\"items\":[{\"queue\":\"q\",\"payload\":\"" + "x".repeat(8000) + "\"}]}";
    TestBroker.Reply r = broker.post("/api/v1/push", big);
    assertThat(r.status()).isEqualTo(413);
    assertThat(r.json().get("error").asText()).isEqualTo("Request body too large");
    assertThat(broker.sqlLong("select count(*) from queen.queues where name = 'q'")).isZero();
  }

  @Test
  void aBodyOverTheLimitIsA413AlsoOnARouteThatReadsNoBody() {
    TestBroker.Reply r =
        broker.send(
            HttpRequest.newBuilder(broker.uri("/health"))
                .method("GET", HttpRequest.BodyPublishers.ofString("x".repeat(8000)))
                .build());
    assertThat(r.status()).isEqualTo(413);
    assertThat(r.json().get("error").asText()).isEqualTo("Request body too large");
  }

  @Test
  void headIsAnsweredAsAGetWithoutItsBodyButNotOnAPopWhichWouldClaimMessages() {
    TestBroker.Reply health =
        broker.send(HttpRequest.newBuilder(broker.uri("/health")).HEAD().build());
    assertThat(health.status()).isEqualTo(200);
    assertThat(health.text()).isEmpty();
    assertThat(health.headers().firstValue("content-type")).hasValue("application/json");
    new queen.server.Wire(broker).pushNumbered("headed", "Default", 0, 1);
    TestBroker.Reply pop =
        broker.send(
            HttpRequest.newBuilder(broker.uri("/api/v1/pop/queue/headed?wait=false"))
                .HEAD()
                .build());
    assertThat(pop.status()).isEqualTo(405);
    assertThat(pop.headers().firstValue("allow")).hasValue("GET");
    assertThat(broker.get("/api/v1/pop/queue/headed?wait=false").json().get("messages"))
        .as("the HEAD claimed nothing")
        .hasSize(1);
  }

  @Test
  void getOnAPostRouteIsNotFound() {
    assertThat(broker.get("/api/v1/push").status()).isEqualTo(404);
  }

  @Test
  void aJsonContentTypeOnAGetIsAccepted() {
    TestBroker.Reply r =
        broker.send(
            HttpRequest.newBuilder(broker.uri("/api/v1/pop/queue/x/partition/Default"))
                .header("Content-Type", "application/json")
                .GET()
                .build());
    assertThat(r.status()).isEqualTo(204);
  }
}
