package queen.client;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import queen.server.TestBroker;

class FailureTest {
  @RegisterExtension static final TestBroker broker = new TestBroker();
  static Queen queen;

  @BeforeAll
  static void connect() {
    queen = Queen.connect("http://127.0.0.1:" + broker.port());
  }

  @AfterAll
  static void close() {
    queen.close();
  }

  @Test
  void aThrowingHandlerIsRetriedThenDeadLetteredWithItsExceptionText() throws Exception {
    queen.queue("f-dlq").config(Map.of("retryLimit", 2)).create();
    queen.queue("f-dlq").push(Map.of("order", 7));
    AtomicInteger attempts = new AtomicInteger();
    Consumer consumer =
        queen
            .queue("f-dlq")
            .limit(3)
            .consume(
                batch -> {
                  attempts.incrementAndGet();
                  throw new IllegalStateException("card declined for order 7");
                });
    assertThat(consumer.await(Duration.ofSeconds(30))).isTrue();

    assertThat(attempts.get()).as("first delivery plus retryLimit redeliveries").isEqualTo(3);
    assertThat(consumer.failed()).isEqualTo(3);
    List<DeadLetter> dead = queen.queue("f-dlq").dlq().get();
    assertThat(dead).hasSize(1);
    assertThat(dead.getFirst().errorMessage()).isEqualTo("card declined for order 7");
    assertThat(dead.getFirst().data().get("order").asInt()).isEqualTo(7);
    assertThat(dead.getFirst().consumerGroup()).isEqualTo(Queen.QUEUE_MODE);
    assertThat(queen.queue("f-dlq").wait(false).pop()).as("nothing left to deliver").isEmpty();
  }

  @Test
  void aHandlerThrowingAnErrorIsAckedFailedLikeAnException() throws Exception {
    List<Error> errors = List.of(new AssertionError("poison"), new StackOverflowError("deep"));
    for (Error error : errors) {
      String queue = "f-error-" + error.getClass().getSimpleName();
      queen.queue(queue).config(Map.of("retryLimit", 0)).create();
      queen.queue(queue).push(Map.of("order", 8));
      Consumer consumer =
          queen
              .queue(queue)
              .limit(1)
              .each()
              .consume(
                  m -> {
                    throw error;
                  });
      // before, the error ended the consumer with its message unacked: redelivered at every
      // lease's end and never dead lettered
      assertThat(consumer.await(Duration.ofSeconds(30))).isTrue();
      assertThat(queen.queue(queue).dlq().get())
          .singleElement()
          .satisfies(d -> assertThat(d.errorMessage()).isEqualTo(error.getMessage()));
    }
  }
}
