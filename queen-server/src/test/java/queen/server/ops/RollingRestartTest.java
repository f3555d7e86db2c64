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
import java.util.concurrent.atomic.AtomicIntegerArray;
import java.util.concurrent.atomic.AtomicReferenceArray;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import queen.server.Broker;
import queen.server.ChildBroker;
import queen.server.TestBroker;
import queen.server.Wire;

/**
 * Brokers under push and pop+ack load, one of them stopped and started again in the middle, or
 * killed with SIGKILL: every push answered is delivered and acked, and no acked message is
 * delivered again. Clients do what Queen's do with several URLs: a request a broker cut off is sent
 * to the next one.
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

  /** The brokers' URLs; clients start at one and go round the others when it cuts them off. */
  private final AtomicReferenceArray<String> bases = new AtomicReferenceArray<>(3);

  private final AtomicIntegerArray answersFrom = new AtomicIntegerArray(3);

  private int brokers;
  private String queue;

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

  /** The broker at {@code first}, then the others in turn when one cuts the request off. */
  private HttpResponse<String> either(int first, String method, String path, String body)
      throws InterruptedException {
    for (int k = 0; k < 2 * brokers; k++) {
      int at = (first + k) % brokers;
      try {
        HttpResponse<String> r = send(bases.get(at), method, path, body);
        answersFrom.incrementAndGet(at);
        return r;
      } catch (IOException e) {
        // stopping, killed or not started yet: the next broker
      }
    }
    return null;
  }

  private void produce(int producer) {
    try {
      for (int n = 0; producing.get(); n++) {
        String txn = "rr-" + producer + "-" + n;
        String body =
            Wire.items(List.of(Wire.item(queue, "p" + (n % 8), txn, Wire.object().put("n", n))))
                .toString();
        HttpResponse<String> r = either(n % brokers, "POST", "/api/v1/push", body);
        // 200: a retry found the push stored already (its first answer was cut off)
        if (r != null && (r.statusCode() == 201 || r.statusCode() == 200)) {
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
        int first = (i + consumer) % brokers;
        HttpResponse<String> r =
            either(
                first,
                "GET",
                "/api/v1/pop/queue/" + queue + "?consumerGroup=g&batch=10&wait=true&timeout=500",
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
        HttpResponse<String> done = either(first, "POST", "/api/v1/ack/batch", ack.toString());
        if (done != null && done.statusCode() == 200) {
          JsonNode results = json(done.body());
          for (int k = 0; k < results.size(); k++) {
            // an ack applied by a broker killed before it answered and sent again succeeds
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

  private List<Thread> load(int producersAndConsumers) {
    List<Thread> threads = new ArrayList<>();
    for (int i = 0; i < producersAndConsumers; i++) {
      int id = i;
      threads.add(Thread.ofVirtual().start(() -> produce(id)));
      threads.add(Thread.ofVirtual().start(() -> consume(id)));
    }
    return threads;
  }

  /** Stops producing, waits until every answered push is acked, stops consuming. */
  private void drain(List<Thread> threads, Duration within) throws InterruptedException {
    producing.set(false);
    await()
        .atMost(within)
        .untilAsserted(() -> assertThat(acked).as(this::cursors).containsAll(answered));
    stopConsuming(threads);
  }

  /** Group g's cursor on each partition, to tell a message never delivered from a lost answer. */
  private String cursors() {
    return broker.sqlText(
        "select string_agg(format('%s: last %s, committed %s, lease %s until %s, batch_end %s,"
            + " released_by %s, redelivered_to %s', p.name, p.last_offset, c.committed,"
            + " c.worker_id, c.lease_expires_at, c.batch_end, c.released_by, c.redelivered_to),"
            + " E'\\n' order by p.name)"
            + " from queen.log_partitions p join queen.queues q on q.id = p.queue_id"
            + " left join queen.log_consumers c on c.partition_id = p.id and c.consumer_group = 'g'"
            + " where q.name = '"
            + queue
            + "'");
  }

  private void stopConsuming(List<Thread> threads) throws InterruptedException {
    consuming.set(false);
    for (Thread t : threads) {
      t.join(15_000);
    }
  }

  /** Messages of the queue not yet consumed by group g, according to the cursors. */
  private long unconsumed() {
    return broker.sqlLong(
        "select coalesce(sum(p.last_offset - coalesce(c.committed, -1)), 0)"
            + " from queen.log_partitions p join queen.queues q on q.id = p.queue_id"
            + " left join queen.log_consumers c on c.partition_id = p.id and c.consumer_group = 'g'"
            + " where q.name = '"
            + queue
            + "'");
  }

  @Test
  void aBrokerRestartedUnderLoadLosesNothingAndRedeliversNothingAcked() throws Exception {
    brokers = 2;
    queue = "rolling";
    // a pop whose answer the restart lost (a client timing out under load) is leased again soon
    new Wire(broker).configure(queue, Wire.object().put("leaseTime", 5));
    bases.set(0, "http://127.0.0.1:" + broker.port());
    Broker second = broker.startAnother();
    bases.set(1, "http://127.0.0.1:" + second.port());
    List<Thread> threads = load(4);
    await().atMost(Duration.ofSeconds(30)).until(() -> acked.size() >= 300);
    second.close();
    try (Broker third = broker.startAnother()) {
      bases.set(1, "http://127.0.0.1:" + third.port());
      int before = acked.size();
      await().atMost(Duration.ofSeconds(30)).until(() -> acked.size() >= before + 300);
      drain(threads, Duration.ofSeconds(60));
    }
    assertThat(answered).hasSizeGreaterThan(600);
    assertThat(redeliveredAfterAck.get()).as("acked messages delivered again").isZero();
  }

  @Test
  void oneOfThreeBrokersKilledWithSigkillUnderLoadLosesNothingAndRedeliversNothingAcked()
      throws Exception {
    brokers = 3;
    queue = "killed";
    // batches popped through the killed broker whose answer never arrived come back after this
    new Wire(broker).configure(queue, Wire.object().put("leaseTime", 2));
    bases.set(0, "http://127.0.0.1:" + broker.port());
    try (Broker second = broker.startAnother()) {
      bases.set(1, "http://127.0.0.1:" + second.port());
      ChildBroker.Started child = ChildBroker.start(broker.db());
      bases.set(2, child.url());
      List<Thread> threads = load(3);
      try {
        await().atMost(Duration.ofSeconds(30)).until(() -> acked.size() >= 300);
      } finally {
        child.process().destroyForcibly().waitFor(); // SIGKILL: no shutdown hook runs
      }
      assertThat(answersFrom.get(2)).as("requests the child answered before the kill").isPositive();
      int before = acked.size();
      await().atMost(Duration.ofSeconds(30)).until(() -> acked.size() >= before + 300);
      drain(threads, Duration.ofSeconds(60));
    }
    assertThat(unconsumed()).isZero();
    assertThat(answered).hasSizeGreaterThan(600);
    assertThat(redeliveredAfterAck.get()).as("acked messages delivered again").isZero();
    assertThat(answersFrom.get(0) + answersFrom.get(1))
        .as("the survivors served the rest")
        .isGreaterThan(600);
  }
}
