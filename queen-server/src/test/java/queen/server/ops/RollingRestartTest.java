package queen.server.ops;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import queen.server.Broker;
import queen.server.TestBroker;
import queen.server.Wire;

/**
 * Two brokers under push and pop+ack load, one of them stopped and started again in the middle:
 * every push answered is delivered and acked, and no acked message is delivered again. Clients do
 * what Queen's do with two URLs: a request the stopping broker cut off is sent to the other one.
 */
class RollingRestartTest {
  @RegisterExtension static final TestBroker broker = new TestBroker();

  private final HttpClient http =
      HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build();
  private final Set<String> answered = ConcurrentHashMap.newKeySet();
  private final Set<String> acked = ConcurrentHashMap.newKeySet();
  private final AtomicInteger redeliveredAfterAck = new AtomicInteger();
  private final AtomicBoolean producing = new AtomicBoolean(true);
  private final AtomicBoolean consuming = new AtomicBoolean(true);
  private String a;
  private final AtomicReference<String> b = new AtomicReference<>();

  private HttpResponse<String> send(String base, String method, String path, String body)
      throws IOException, InterruptedException {
    return http.send(
        HttpRequest.newBuilder(URI.create(base + path))
            .timeout(Duration.ofSeconds(10))
            .header("Content-Type", "application/json")
            .method(
                method,
                body == null
                    ? HttpRequest.BodyPublishers.noBody()
                    : HttpRequest.BodyPublishers.ofString(body))
            .build(),
        HttpResponse.BodyHandlers.ofString());
  }

  /** The first base, then the other one when the first cuts the request off. */
  private HttpResponse<String> either(
      String first, String other, String method, String path, String body)
      throws InterruptedException {
    for (String base : List.of(first, other, first, other)) {
      try {
        return send(base, method, path, body);
      } catch (IOException e) {
        // stopping or not started yet: the other broker
      }
    }
    return null;
  }

  private void produce(int producer) {
    try {
      for (int n = 0; producing.get(); n++) {
        String txn = "rr-" + producer + "-" + n;
        String body =
            Wire.items(List.of(Wire.item("rolling", "p" + (n % 8), txn, Wire.object().put("n", n))))
                .toString();
        String first = n % 2 == 0 ? a : b.get();
        HttpResponse<String> r =
            either(first, first.equals(a) ? b.get() : a, "POST", "/api/v1/push", body);
        if (r != null && r.statusCode() == 201) {
          answered.add(txn);
        }
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  private void consume(int consumer) {
    try {
      for (int i = 0; consuming.get(); i++) {
        String first = (i + consumer) % 2 == 0 ? a : b.get();
        String other = first.equals(a) ? b.get() : a;
        HttpResponse<String> r =
            either(
                first,
                other,
                "GET",
                "/api/v1/pop/queue/rolling?consumerGroup=g&batch=10&wait=true&timeout=500",
                null);
        if (r == null || r.statusCode() != 200) {
          continue;
        }
        JsonNode popped = json(r.body());
        ObjectNode ack = Wire.object().put("consumerGroup", "g");
        ArrayNode items = ack.putArray("acknowledgments");
        List<String> txns = new ArrayList<>();
        for (JsonNode m : popped.get("messages")) {
          String txn = m.get("transactionId").asText();
          if (acked.contains(txn)) {
            redeliveredAfterAck.incrementAndGet();
          }
          txns.add(txn);
          items.add(Wire.ack(m, "completed", null));
        }
        HttpResponse<String> done =
            either(first, other, "POST", "/api/v1/ack/batch", ack.toString());
        if (done != null && done.statusCode() == 200) {
          JsonNode results = json(done.body());
          for (int k = 0; k < results.size(); k++) {
            if (results.get(k).get("success").asBoolean()) {
              acked.add(txns.get(k));
            }
          }
        }
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  private static JsonNode json(String text) {
    try {
      return TestBroker.JSON.readTree(text);
    } catch (IOException e) {
      throw new IllegalStateException(text, e);
    }
  }

  @Test
  void aBrokerRestartedUnderLoadLosesNothingAndRedeliversNothingAcked() throws Exception {
    a = "http://127.0.0.1:" + broker.port();
    Broker second = broker.startAnother();
    b.set("http://127.0.0.1:" + second.port());
    List<Thread> threads = new ArrayList<>();
    for (int i = 0; i < 4; i++) {
      int id = i;
      threads.add(Thread.ofVirtual().start(() -> produce(id)));
      threads.add(Thread.ofVirtual().start(() -> consume(id)));
    }
    await().atMost(Duration.ofSeconds(30)).until(() -> acked.size() >= 300);
    second.close();
    try (Broker third = broker.startAnother()) {
      b.set("http://127.0.0.1:" + third.port());
      int before = acked.size();
      await().atMost(Duration.ofSeconds(30)).until(() -> acked.size() >= before + 300);
      producing.set(false);
      await()
          .atMost(Duration.ofSeconds(60))
          .untilAsserted(() -> assertThat(acked).containsAll(answered));
      consuming.set(false);
      for (Thread t : threads) {
        t.join(15_000);
      }
    }
    assertThat(answered).hasSizeGreaterThan(600);
    assertThat(redeliveredAfterAck.get()).as("acked messages delivered again").isZero();
  }
}
