package queen.server.ops;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import queen.server.Broker;
import queen.server.TestBroker;
import queen.server.Wire;

/**
 * A stopping broker answers its parked long-polls with 204 and closes their connections (their
 * clients poll again elsewhere), and lets the pushes in flight finish: every push it answered is
 * stored.
 */
class ShutdownTest {
  @RegisterExtension static final TestBroker broker = new TestBroker();

  private static double parked(Broker b, String queue) {
    for (String line : broker.get(b, "/metrics/prometheus").text().split("\n")) {
      if (line.startsWith("queen_queue_parked_consumers{")
          && line.contains("queue=\"" + queue + "\"")) {
        return Double.parseDouble(line.substring(line.lastIndexOf(' ') + 1));
      }
    }
    return 0;
  }

  @Test
  void parkedPollsAnswer204AndEveryAnsweredPushIsStored() throws Exception {
    new Wire(broker).configure("idle", Wire.object());
    Set<String> answered = ConcurrentHashMap.newKeySet();
    AtomicInteger sent = new AtomicInteger();
    List<CompletableFuture<HttpResponse<String>>> polls = new ArrayList<>();
    List<Thread> producers = new ArrayList<>();
    try (HttpClient http = HttpClient.newHttpClient()) {
      Broker b = broker.startAnother();
      String base = "http://127.0.0.1:" + b.port();
      for (int i = 0; i < 20; i++) {
        polls.add(
            http.sendAsync(
                HttpRequest.newBuilder(
                        URI.create(base + "/api/v1/pop/queue/idle?wait=true&timeout=30000"))
                    .build(),
                HttpResponse.BodyHandlers.ofString()));
      }
      await().atMost(Duration.ofSeconds(10)).until(() -> parked(b, "idle") == 20);
      for (int t = 0; t < 4; t++) {
        int producer = t;
        producers.add(
            Thread.ofVirtual()
                .start(
                    () -> {
                      for (int n = 0; ; n++) {
                        String txn = "sd-" + producer + "-" + n;
                        String body =
                            Wire.items(
                                    List.of(Wire.item("busy", "p" + producer, txn, Wire.object())))
                                .toString();
                        sent.incrementAndGet();
                        try {
                          HttpResponse<String> r =
                              http.send(
                                  HttpRequest.newBuilder(URI.create(base + "/api/v1/push"))
                                      // a connection accepted as the listener stops can be left
                                      // open unread in this JVM (a process that stops exits)
                                      .timeout(Duration.ofSeconds(10))
                                      .header("Content-Type", "application/json")
                                      .POST(HttpRequest.BodyPublishers.ofString(body))
                                      .build(),
                                  HttpResponse.BodyHandlers.ofString());
                          if (r.statusCode() == 201) {
                            answered.add(txn);
                          }
                        } catch (IOException | InterruptedException e) {
                          return; // the broker is gone
                        }
                      }
                    }));
      }
      await().atMost(Duration.ofSeconds(10)).until(() -> answered.size() >= 100);
      b.close();
      for (CompletableFuture<HttpResponse<String>> poll : polls) {
        HttpResponse<String> answer = poll.get(5, TimeUnit.SECONDS);
        assertThat(answer.statusCode()).as("a parked poll is answered, not cut").isEqualTo(204);
        // else its client polls the stopping broker again on the same connection
        assertThat(answer.headers().firstValue("connection")).hasValue("close");
      }
      for (Thread p : producers) {
        p.join(10_000);
      }
    }
    Set<String> stored = new HashSet<>();
    while (true) {
      TestBroker.Reply r =
          broker.get(
              "/api/v1/pop/queue/busy?consumerGroup=check&batch=1000&autoAck=true&partitions=4");
      if (r.status() == 204) {
        break;
      }
      for (JsonNode m : r.json().get("messages")) {
        stored.add(m.get("transactionId").asText());
      }
    }
    assertThat(stored).as("every push answered 201 is stored").containsAll(answered);
    assertThat(sent.get()).isGreaterThanOrEqualTo(answered.size());
  }
}
