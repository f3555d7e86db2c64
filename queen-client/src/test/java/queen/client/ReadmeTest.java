package queen.client;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import queen.server.TestBroker;

/**
 * Runs every Java example of README.md. Each example sits between "begin README" and "end README"
 * comments below (which also keep the formatter off it), and {@link
 * #theReadmeShowsExactlyTheseExamples} checks that the README's code blocks are these, character
 * for character (the broker URL aside).
 */
class ReadmeTest {
  @RegisterExtension static final TestBroker broker = new TestBroker();
  static String url;
  static Queen queen;

  @BeforeAll
  static void connect() {
    url = "http://127.0.0.1:" + broker.port();
    queen = Queen.connect(url);
  }

  @AfterAll
  static void close() {
    queen.close();
  }

  @Test
  void pushPopAck() {
    queen.queue("orders").delete(); // what other examples left there would be popped first
    // begin README (spotless:off)
    try (Queen queen = Queen.connect(url)) {
      queen.queue("orders").config(Map.of("leaseTime", 30, "retryLimit", 3)).create();
      queen.queue("orders").partition("customer-42").push(Map.of("orderId", 1, "total", 12.5));

      for (Message m : queen.queue("orders").batch(10).wait(false).pop()) {
        System.out.println(m.partition() + ": " + m.data());
        queen.ack(m, true);
      }
    }
    // end README (spotless:on)
    assertThat(queen.queue("orders").partition("customer-42").wait(false).pop()).isEmpty();
  }

  @Test
  void consume() throws Exception {
    queen.queue("orders").push(Map.of("orderId", 2, "total", 3.0));
    // begin README (spotless:off)
    record Order(int orderId, double total) {}

    Consumer consumer = queen.queue("orders")
        .group("billing")
        .concurrency(4)
        .batch(10)
        .consume(batch -> {
          for (Message m : batch) {
            Order order = m.data(Order.class);
            System.out.println("charging " + order.total());
          }
        });
    // on shutdown: finishes running handlers, acks them, then returns
    consumer.stop();
    // end README (spotless:on)
    assertThat(consumer.isRunning()).isFalse();
  }

  @Test
  void each() throws Exception {
    for (int i = 0; i < 100; i++) {
      queen.queue("emails").push(Map.of("to", "user" + i + "@example.com"));
    }
    // begin README (spotless:off)
    Consumer oneByOne = queen.queue("emails")
        .limit(100)
        .idleMillis(5_000)
        .each()
        .consume(m -> System.out.println("sending " + m.data()));
    oneByOne.await();
    // end README (spotless:on)
    assertThat(oneByOne.processed()).isEqualTo(100);
  }

  @Test
  void transaction() {
    queen.queue("orders").partition("tx").push(Map.of("orderId", 3, "total", 1.0));
    // begin README (spotless:off)
    List<Message> batch = queen.queue("orders").batch(10).wait(false).pop();
    if (!batch.isEmpty()) {
      queen.transaction()
          .ack(batch.toArray(Message[]::new))
          .queue("invoices").partition("customer-42").push(Map.of("orders", batch.size()))
          .commit();
    }
    // end README (spotless:on)
    List<Message> invoices = queen.queue("invoices").wait(false).pop();
    assertThat(invoices).hasSize(1);
    assertThat(invoices.getFirst().data().get("orders").asInt()).isEqualTo(batch.size());
    List<String> acked = batch.stream().map(Message::transactionId).toList();
    assertThat(queen.queue("orders").batch(100).partitions(10).wait(false).pop())
        .extracting(Message::transactionId)
        .doesNotContainAnyElementsOf(acked);
  }

  @Test
  void buffer() {
    // begin README (spotless:off)
    BufferedPush events = queen.queue("events").buffer(500, 100);
    for (int i = 0; i < 10_000; i++) {
      events.push(Map.of("i", i));
    }
    queen.flushAllBuffers();
    // end README (spotless:on)
    assertThat(queen.bufferStats().bufferedMessages()).isZero();
    assertThat(queen.bufferStats().flushesPerformed()).isGreaterThanOrEqualTo(20);
    assertThat(queen.queue("events").batch(10_000).wait(false).pop()).hasSize(10_000);
  }

  @Test
  void deadLetters() {
    queen.queue("orders").partition("dlq-case").push(Map.of("orderId", 4, "total", 9.0));
    List<Message> popped =
        queen.queue("orders").partition("dlq-case").group("billing").wait(false).pop();
    queen.ack(popped, "dlq", "card declined");
    // begin README (spotless:off)
    for (DeadLetter d : queen.queue("orders").dlq("billing").limit(20).get()) {
      System.out.println(d.transactionId() + " failed: " + d.errorMessage());
      queen.admin().retryDeadLetter(d.partitionId(), d.transactionId());
    }
    // end README (spotless:on)
    List<Message> again =
        queen.queue("orders").partition("dlq-case").group("billing").wait(false).pop();
    assertThat(again).hasSize(1);
    assertThat(again.getFirst().data().get("orderId").asInt()).isEqualTo(4);
  }

  @Test
  void consumerGroupsAndTraces() throws Exception {
    queen.queue("orders").push(Map.of("orderId", 5, "total", 2.0));
    // begin README (spotless:off)
    queen.admin().seek("billing", "orders", Instant.parse("2026-12-01T09:00:00Z")); // read again from 9:00
    queen.admin().seekToEnd("billing", "orders");                  // skip the backlog
    JsonNode cursors = queen.admin().consumerGroup("billing");     // lag per queue and partition
    queen.admin().deleteConsumerGroup("billing", true);            // start over from the subscription
    JsonNode ops = queen.admin().analyticsSeries("queue-ops", Map.of("queue", "orders")); // per minute

    Consumer traced = queen.queue("orders").group("billing").limit(1).each()
        .consume(m -> m.trace("order-flow", Map.of("step", "charged"))); // never throws
    traced.await();
    // end README (spotless:on)
    assertThat(cursors.has("orders")).isTrue();
    assertThat(ops.has("queues")).isTrue();
    assertThat(broker.get("/api/v1/traces/by-name/order-flow").json().get("total").asInt())
        .isEqualTo(1);
  }

  @Test
  void severalBrokers() {
    // begin README (spotless:off)
    Queen cluster = Queen.builder()
        .urls(List.of("http://broker-a:6632", "http://broker-b:6632"))
        .loadBalancing(LoadBalancing.AFFINITY)
        .timeout(Duration.ofSeconds(10))
        .retries(3, Duration.ofMillis(500))
        .bearerToken(System.getenv().getOrDefault("QUEEN_TOKEN", "dev-token"))
        .build();
    cluster.close();
    // end README (spotless:on)
  }

  @Test
  void theReadmeShowsExactlyTheseExamples() throws IOException {
    String readme = Files.readString(Path.of("README.md"));
    String source = Files.readString(Path.of("src/test/java/queen/client/ReadmeTest.java"));
    List<String> documented = new ArrayList<>();
    Matcher blocks = Pattern.compile("```java\n(.*?)```", Pattern.DOTALL).matcher(readme);
    while (blocks.find()) {
      documented.add(normalize(blocks.group(1).replace("\"http://localhost:6632\"", "url")));
    }
    List<String> tested = new ArrayList<>();
    Matcher examples =
        Pattern.compile(
                "// begin README \\(spotless:off\\)\n(.*?)\n\\s*// end README", Pattern.DOTALL)
            .matcher(source);
    while (examples.find()) {
      tested.add(normalize(examples.group(1)));
    }
    assertThat(documented).isEqualTo(tested);
  }

  /** Without the indentation common to every line, and without trailing blank lines. */
  private static String normalize(String code) {
    List<String> lines = code.stripTrailing().lines().toList();
    int indent =
        lines.stream()
            .filter(l -> !l.isBlank())
            .mapToInt(l -> l.length() - l.stripLeading().length())
            .min()
            .orElse(0);
    StringBuilder sb = new StringBuilder();
    for (String l : lines) {
      sb.append(l.isBlank() ? "" : l.substring(indent)).append('\n');
    }
    return sb.toString();
  }
}
