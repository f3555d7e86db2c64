package queen.client;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import queen.server.TestBroker;
import queen.server.http.auth.Tokens;

/** The client against a broker with JWT on: a fixed token, a supplier asked per request, none. */
class TokenTest {
  @RegisterExtension
  static final TestBroker broker =
      new TestBroker(Map.of("JWT_ENABLED", "true", "JWT_SECRET", Tokens.SECRET));

  record N(int n) {}

  private String url() {
    return "http://127.0.0.1:" + broker.port();
  }

  @Test
  void aSupplierIsAskedForEveryRequestSoARenewedTokenIsUsed() {
    AtomicInteger asked = new AtomicInteger();
    try (Queen queen =
        Queen.builder()
            .url(url())
            .tokenSupplier(() -> Tokens.hs256("producer-" + asked.incrementAndGet(), "read-write"))
            .build()) {
      queen.queue("tok").push(new N(1));
      queen.queue("tok").push(new N(2));
      List<Message> got = queen.queue("tok").batch(10).wait(false).pop();
      assertThat(got).hasSize(2);
      assertThat(got.get(0).producerSub()).isEqualTo("producer-1");
      assertThat(got.get(1).producerSub()).isEqualTo("producer-2");
      assertThat(asked.get()).isEqualTo(3);
    }
  }

  @Test
  void aSupplierThatThrowsOnceIsRetriedAndTheConsumerGoesOn() throws Exception {
    try (Queen producer =
        Queen.builder().url(url()).bearerToken(Tokens.hs256("svc", "read-write")).build()) {
      producer.queue("tok-blip").push(new N(1));
    }
    AtomicInteger asked = new AtomicInteger();
    try (Queen queen =
        Queen.builder()
            .url(url())
            .retries(3, java.time.Duration.ofMillis(20))
            .tokenSupplier(
                () -> {
                  if (asked.incrementAndGet() == 1) {
                    throw new IllegalStateException("identity provider away");
                  }
                  return Tokens.hs256("consumer", "read-write");
                })
            .build()) {
      Consumer c = queen.queue("tok-blip").limit(1).consume(batch -> {});
      // before, the supplier's exception ended the consumer at its first poll
      assertThat(c.await(java.time.Duration.ofSeconds(20))).isTrue();
      assertThat(c.processed()).isEqualTo(1);
    }
  }

  @Test
  void aFixedTokenWorksAndNoTokenIsRefusedWith401() {
    try (Queen queen =
        Queen.builder().url(url()).bearerToken(Tokens.hs256("svc", "read-write")).build()) {
      queen.queue("tok2").push(new N(1));
    }
    try (Queen anonymous = Queen.connect(url())) {
      assertThatThrownBy(() -> anonymous.queue("tok2").push(new N(2)))
          .isInstanceOfSatisfying(QueenException.class, e -> assertThat(e.status()).isEqualTo(401));
    }
  }
}
