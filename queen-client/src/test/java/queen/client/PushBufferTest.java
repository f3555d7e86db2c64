package queen.client;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import queen.server.TestBroker;

/** Client-side push buffers against a broker's refusals, a closing producer and a long outage. */
class PushBufferTest {
  @RegisterExtension
  static final TestBroker broker =
      new TestBroker(Map.of("QUEEN_MAX_PUSH_ITEMS", "100", "QUEEN_MAX_PAYLOAD_BYTES", "1000"));

  record N(int n) {}

  record Big(String text) {}

  private static Queen client() {
    return Queen.connect("http://127.0.0.1:" + broker.port());
  }

  private static List<Integer> popAll(Queen queen, String queue) {
    return queen.queue(queue).batch(1000).wait(false).pop().stream()
        .map(m -> m.data().get("n").asInt())
        .toList();
  }

  @Test
  void aRequestTheBrokerRefusesIsSentInHalvesAndOnlyAnItemRefusedOnItsOwnIsDropped() {
    try (Queen queen = client()) {
      // 250 a request is over the broker's 100 items, and one item is over its payload size
      BufferedPush events = queen.queue("halves").buffer(250, 60_000);
      for (int i = 0; i < 248; i++) {
        if (i == 125) {
          events.push(new Big("x".repeat(2_000)));
        }
        events.push(new N(i));
      }
      // the push that fills the buffer sends it, and throws for the one item refused on its own
      assertThatThrownBy(() -> events.push(new N(248)))
          .isInstanceOfSatisfying(QueenException.class, e -> assertThat(e.status()).isEqualTo(413));
      queen.flushAllBuffers();
      assertThat(popAll(queen, "halves"))
          .as("every item but the refused one, in push order")
          .containsExactlyElementsOf(IntStream.range(0, 249).boxed().toList());
    }
  }

  @Test
  void aBufferSentEmptyIsNotKept() {
    try (Queen queen = client()) {
      for (int i = 0; i < 1_000; i++) {
        queen.queue("per-customer").partition("c-" + i).buffer(10, 60_000).push(new N(i));
      }
      assertThat(queen.buffers.kept()).isEqualTo(1_000);
      queen.flushAllBuffers();
      assertThat(queen.buffers.kept()).as("one buffer per partition ever pushed to").isZero();
      queen.queue("per-customer").partition("c-1").buffer(10, 60_000).push(new N(1_001));
      queen.flushAllBuffers();
      assertThat(queen.queue("per-customer").partition("c-1").batch(10).wait(false).pop())
          .extracting(m -> m.data().get("n").asInt())
          .containsExactly(1, 1_001);
    }
  }

  @Test
  void closingOnAnInterruptedThreadStillSendsWhatWasBuffered() {
    Queen producer = client();
    BufferedPush events = producer.queue("interrupted").buffer(100, 60_000);
    for (int i = 0; i < 10; i++) {
      events.push(new N(i));
    }
    Thread.currentThread().interrupt(); // a producer told to end, closing in its finally
    producer.close();
    assertThat(Thread.interrupted()).as("the flag is set again").isTrue();
    try (Queen queen = client()) {
      assertThat(popAll(queen, "interrupted")).hasSize(10);
    }
  }

  @Test
  void aBufferWhoseSendsFailRefusesPushesOnceItHoldsTenBatches() {
    try (StubServer stub = new StubServer(n -> new StubServer.Answer(403, "{\"error\":\"no\"}"))) {
      Queen queen = Queen.builder().url(stub.url()).retries(1, Duration.ZERO).build();
      BufferedPush events = queen.queue("refused").buffer(10, 60_000);
      int taken = 0;
      QueenException full = null;
      while (full == null && taken < 1_000) {
        try {
          events.push(new N(taken));
          taken++;
        } catch (QueenException e) {
          full = e;
        }
      }
      assertThat(full).as("a push refused before 1,000 were buffered").isNotNull();
      assertThat(full.getMessage()).contains("full", "no");
      assertThat(taken).isEqualTo(10 * PushBuffers.HELD_BATCHES);
      assertThat(queen.bufferStats().bufferedMessages()).isEqualTo(taken);
      assertThatThrownBy(queen::close).isInstanceOf(QueenException.class);
    }
  }

  // each push that found the buffer full waited out a send's retries (3 s each without a broker),
  // so a producer crawled and never reached the refusal (helper-142)
  @Test
  void whileItsSendsFailABufferTakesPushesWithoutSendingOnThePushingThread() {
    try (StubServer stub =
        new StubServer(n -> new StubServer.Answer(503, "{\"error\":\"down\"}"))) {
      Queen queen = Queen.builder().url(stub.url()).retries(1, Duration.ZERO).build();
      BufferedPush events = queen.queue("away").buffer(5, 60_000);
      for (int i = 0; i < 5 * PushBuffers.HELD_BATCHES; i++) {
        events.push(new N(i));
      }
      assertThat(stub.requests.get()).as("the send of the push that filled it, only").isEqualTo(1);
      assertThatThrownBy(() -> events.push(new N(-1)))
          .isInstanceOf(QueenException.class)
          .hasMessageContaining("full");
      assertThatThrownBy(queen::close).isInstanceOf(QueenException.class);
    }
  }

  // a 401 was sent again every millis (64 warnings in 2 s at 20 ms; helper-142)
  @Test
  void aBufferWhoseSendsFailTriesAgainAfterAGrowingPause() {
    try (StubServer stub = new StubServer(n -> new StubServer.Answer(401, "{\"error\":\"no\"}"))) {
      Queen queen = Queen.builder().url(stub.url()).retries(1, Duration.ZERO).build();
      long start = System.nanoTime();
      queen.queue("unauthorized").buffer(10, 20).push(new N(1));
      await().atMost(Duration.ofSeconds(15)).until(() -> stub.requests.get() >= 3);
      assertThat(Duration.ofNanos(System.nanoTime() - start))
          .as("20 ms, then 1 s and 2 s pauses")
          .isGreaterThanOrEqualTo(Duration.ofMillis(3_000));
      assertThat(queen.bufferStats().bufferedMessages()).isEqualTo(1);
      assertThatThrownBy(queen::close).isInstanceOf(QueenException.class);
    }
  }

  // a push after close was taken and never sent, its timer made again (helper-142)
  @Test
  void aClosedClientsBufferRefusesPushes() {
    Queen queen = client();
    BufferedPush events = queen.queue("after-close").buffer(10, 60_000);
    events.push(new N(0));
    queen.close();
    assertThatThrownBy(() -> events.push(new N(1))).isInstanceOf(IllegalStateException.class);
    assertThat(queen.bufferStats().bufferedMessages()).isZero();
    try (Queen reader = client()) {
      assertThat(popAll(reader, "after-close")).containsExactly(0);
    }
  }

  // close stopped at the item refused on its own, and what lay behind it was lost
  @Test
  void closeSendsWhatLiesBehindAnItemRefusedOnItsOwn() {
    Queen queen = client();
    BufferedPush events = queen.queue("behind").buffer(100, 60_000);
    events.push(new N(0));
    events.push(new Big("x".repeat(2_000)));
    events.push(new N(1));
    events.push(new N(2));
    assertThatThrownBy(queen::close)
        .isInstanceOfSatisfying(QueenException.class, e -> assertThat(e.status()).isEqualTo(413));
    try (Queen reader = client()) {
      assertThat(popAll(reader, "behind")).containsExactly(0, 1, 2);
    }
  }
}
