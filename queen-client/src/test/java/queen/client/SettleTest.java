package queen.client;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import queen.server.TestBroker;

/**
 * How a consumer's and a transaction's acks settle what was handled: the rest of a partition after
 * a dead-lettered message, a late worker's transaction, an ack sent during an outage.
 */
class SettleTest {
  @RegisterExtension static final TestBroker broker = new TestBroker();
  static Queen queen;

  /** A stand-in broker's pop answer: one leased message. */
  private static final String POPPED =
      "{\"messages\":[{\"transactionId\":\"t\",\"partitionId\":\"p\",\"leaseId\":\"l\","
          + "\"queue\":\"q\",\"partition\":\"Default\",\"data\":{}}]}";

  @BeforeAll
  static void connect() {
    queen = Queen.connect("http://127.0.0.1:" + broker.port());
  }

  @AfterAll
  static void close() {
    queen.close();
  }

  // left unacked under the lease, the rest of the partition waited for the lease to end
  @Test
  void eachHandlesTheRestOfAPartitionAfterAMessageWentToTheDeadLetters() throws Exception {
    queen.queue("s-dlq").config(Map.of("retryLimit", 0, "leaseTime", 60)).create();
    queen.queue("s-dlq").partition("p").push(Map.of("n", 0), Map.of("n", 1), Map.of("n", 2));
    List<Integer> handled = new ArrayList<>();
    Consumer consumer =
        queen
            .queue("s-dlq")
            .batch(3)
            .limit(3)
            .each()
            .consume(
                m -> {
                  handled.add(m.data().get("n").asInt());
                  if (m.data().get("n").asInt() == 0) {
                    throw new IllegalStateException("poison");
                  }
                });
    assertThat(consumer.await(Duration.ofSeconds(20))).isTrue();
    assertThat(handled).containsExactly(0, 1, 2);
    assertThat(consumer.failed()).isEqualTo(1);
    assertThat(queen.queue("s-dlq").wait(false).pop()).isEmpty();
  }

  // without its lease, the late worker's ack of a message the next one had acked succeeded, and
  // both transactions' pushes were stored
  @Test
  void aTransactionOfAWorkerWhoseLeaseRanOutIsRefusedAndPushesNothing() {
    queen.queue("s-in").config(Map.of("leaseTime", 1)).create();
    queen.queue("s-in").push(Map.of("order", 1));
    List<Message> first = queen.queue("s-in").wait(false).pop();
    assertThat(first).hasSize(1);
    // the next lease outlives whatever a loaded machine stalls before its transaction commits
    queen.queue("s-in").config(Map.of("leaseTime", 30)).create();
    AtomicReference<List<Message>> again = new AtomicReference<>(List.of());
    await()
        .atMost(Duration.ofSeconds(10))
        .until(
            () -> {
              again.set(queen.queue("s-in").wait(false).pop());
              return !again.get().isEmpty();
            });
    queen
        .transaction()
        .ack(again.get().toArray(Message[]::new))
        .queue("s-out")
        .push(Map.of("from", "again"))
        .commit();
    assertThatThrownBy(
            () ->
                queen
                    .transaction()
                    .ack(first.toArray(Message[]::new))
                    .queue("s-out")
                    .push(Map.of("from", "first"))
                    .commit())
        .isInstanceOf(QueenException.class);
    assertThat(queen.queue("s-out").batch(10).wait(false).pop())
        .extracting(m -> m.data().get("from").asText())
        .containsExactly("again");
  }

  // given up after the transport's few tries, a batch handled during an outage went out again
  @Test
  void anAckTheBrokerCouldNotTakeIsSentAgainUntilItIsAnswered() throws Exception {
    try (StubServer stub =
            new StubServer(
                n ->
                    switch (n) {
                      case 0 -> new StubServer.Answer(200, POPPED);
                      case 1, 2, 3 -> new StubServer.Answer(503, "{\"error\":\"restarting\"}");
                      case 4 -> new StubServer.Answer(200, "[{\"success\":true}]");
                      default -> new StubServer.Answer(204, "");
                    });
        Queen client = Queen.builder().url(stub.url()).retries(3, Duration.ofMillis(20)).build()) {
      Consumer c = client.queue("q").limit(1).consume(batch -> {});
      assertThat(c.await(Duration.ofSeconds(20))).isTrue();
      assertThat(stub.requests.get()).as("the pop, three failed tries, the ack").isEqualTo(5);
    }
  }

  // retried until the consumer stopped, a consumer with idleMillis whose broker went away for good
  // never ended: await() neither returned nor threw
  @Test
  void aConsumerWithIdleMillisEndsWhenItsAcksFailThatLong() {
    try (StubServer stub =
            new StubServer(
                n ->
                    n == 0
                        ? new StubServer.Answer(200, POPPED)
                        : new StubServer.Answer(503, "{\"error\":\"gone\"}"));
        Queen client = Queen.builder().url(stub.url()).retries(1, Duration.ofMillis(10)).build()) {
      Consumer c = client.queue("q").idleMillis(1_000).consume(batch -> {});
      assertThatThrownBy(() -> c.await(Duration.ofSeconds(20)))
          .isInstanceOf(QueenException.class)
          .hasMessageContaining("gone");
    }
  }

  // its clock started at the first failure: an ack whose one try waited out the timeout counted
  // as failing for 0 ms, and the consumer ended a whole try later than its pops would have
  @Test
  void anAckFailingSinceItWasFirstSentEndsAnIdleConsumerOnTime() {
    try (StubServer stub =
            new StubServer(
                n -> {
                  if (n == 0) {
                    return new StubServer.Answer(200, POPPED);
                  }
                  java.util.concurrent.locks.LockSupport.parkNanos(10_000_000_000L);
                  return new StubServer.Answer(503, "{\"error\":\"gone\"}");
                });
        Queen client =
            Queen.builder()
                .url(stub.url())
                .retries(1, Duration.ofMillis(10))
                .timeout(Duration.ofMillis(1_500))
                .build()) {
      Consumer c = client.queue("q").idleMillis(1_000).consume(batch -> {});
      assertThatThrownBy(() -> c.await(Duration.ofMillis(3_300)))
          .isInstanceOf(QueenException.class);
    }
  }

  // the ack that ended the consumer was reported, not the JVM's failure that came before it
  @Test
  void aJvmFailureInAHandlerIsWhatAnEndingConsumerReports() {
    String two =
        "{\"messages\":[{\"transactionId\":\"t1\",\"partitionId\":\"p\",\"leaseId\":\"l\","
            + "\"queue\":\"q\",\"partition\":\"Default\",\"data\":{}},"
            + "{\"transactionId\":\"t2\",\"partitionId\":\"p\",\"leaseId\":\"l\","
            + "\"queue\":\"q\",\"partition\":\"Default\",\"data\":{}}]}";
    try (StubServer stub =
            new StubServer(
                n ->
                    n == 0
                        ? new StubServer.Answer(200, two)
                        : new StubServer.Answer(503, "{\"error\":\"gone\"}"));
        Queen client = Queen.builder().url(stub.url()).retries(1, Duration.ofMillis(10)).build()) {
      Consumer c =
          client
              .queue("q")
              .batch(2)
              .idleMillis(500)
              .each()
              .consume(
                  m -> {
                    if (m.transactionId().equals("t2")) {
                      throw new InternalError("the JVM's own");
                    }
                  });
      assertThatThrownBy(() -> c.await(Duration.ofSeconds(20))).isInstanceOf(InternalError.class);
      assertThat(c.processed()).isEqualTo(1);
    }
  }
}
