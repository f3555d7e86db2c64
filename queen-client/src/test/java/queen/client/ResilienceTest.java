package queen.client;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import queen.server.Broker;
import queen.server.TestBroker;

class ResilienceTest {
  @RegisterExtension static final TestBroker broker = new TestBroker();

  @Test
  void aPushWhoseAnswerWasLostIsRetriedAndStoredOnce() throws Exception {
    try (DroppingProxy proxy = new DroppingProxy(broker.port(), 1);
        Queen viaProxy =
            Queen.builder().url(proxy.url()).retries(3, Duration.ofMillis(50)).build();
        Queen direct = Queen.connect("http://127.0.0.1:" + broker.port())) {
      List<PushResult> results = viaProxy.queue("r-drop").push(Map.of("order", 1));

      assertThat(proxy.requests.get()).as("the dropped request and its retry").isEqualTo(2);
      assertThat(results).hasSize(1);
      assertThat(results.getFirst().duplicate())
          .as("the first attempt was stored; the retry found it by transaction id")
          .isTrue();
      List<Message> stored = direct.queue("r-drop").wait(false).batch(10).pop();
      assertThat(stored).hasSize(1);
      assertThat(stored.getFirst().transactionId()).isEqualTo(results.getFirst().transactionId());
      assertThat(stored.getFirst().id()).isEqualTo(results.getFirst().messageId());
    }
  }

  @Test
  void aTransactionRefusedOnARepeatAfterItsAnswerWasLostIsNotReportedRolledBack() throws Exception {
    try (DroppingProxy proxy = new DroppingProxy(broker.port(), 1);
        Queen viaProxy =
            Queen.builder().url(proxy.url()).retries(3, Duration.ofMillis(50)).build();
        Queen direct = Queen.connect("http://127.0.0.1:" + broker.port())) {
      Transaction t =
          viaProxy
              .transaction()
              .queue("r-txn")
              .push(Map.of("data", Map.of("order", 1), "transactionId", "t-1"));
      // before, "transaction rolled back": a caller that built it anew stored the push twice
      assertThatThrownBy(t::commit)
          .isInstanceOf(QueenException.class)
          .hasMessageContaining("may have committed")
          .hasMessageNotContaining("rolled back");
      assertThat(proxy.requests.get()).as("the dropped request and its repeat").isEqualTo(2);
      assertThat(direct.queue("r-txn").wait(false).batch(10).pop())
          .extracting(Message::transactionId)
          .containsExactly("t-1");
    }
  }

  @Test
  void eachGoesOnWithThePartitionWhenTheAnswerToADeadLetteringAckWasLost() throws Exception {
    // the repeat of the failed ack is answered "already consumed" (dlq false), with the lease
    // still held: the rest of the partition waited for the lease of 60 s to end
    try (Queen direct = Queen.connect("http://127.0.0.1:" + broker.port());
        DroppingProxy proxy = DroppingProxy.dropping(broker.port(), "/api/v1/ack", 1);
        Queen viaProxy = Queen.connect(proxy.url())) {
      direct.queue("r-dlqlost").config(Map.of("retryLimit", 0, "leaseTime", 60)).create();
      direct.queue("r-dlqlost").push(Map.of("n", 0), Map.of("n", 1), Map.of("n", 2));
      CountDownLatch rest = new CountDownLatch(2);
      Consumer consumer =
          viaProxy
              .queue("r-dlqlost")
              .batch(3)
              .limit(3)
              .each()
              .consume(
                  m -> {
                    if (m.data().get("n").asInt() == 0) {
                      throw new IllegalStateException("poison");
                    }
                    rest.countDown();
                  });
      assertThat(rest.await(20, TimeUnit.SECONDS)).as("within the lease, not after it").isTrue();
      assertThat(consumer.await(Duration.ofSeconds(20))).isTrue();
      assertThat(proxy.requests.get())
          .as("the dropped ack and its repeat, then the rest's")
          .isEqualTo(3);
      assertThat(direct.queue("r-dlqlost").wait(false).pop()).isEmpty();
    }
  }

  @Test
  void aBatchWhoseAckKeepsFailingIsNotRenewedAndIsDeliveredAgainAtItsLeaseEnd() throws Exception {
    try (Queen direct = Queen.connect("http://127.0.0.1:" + broker.port());
        DroppingProxy proxy = DroppingProxy.refusing(broker.port(), "/api/v1/ack");
        Queen viaProxy =
            Queen.builder().url(proxy.url()).retries(1, Duration.ofMillis(50)).build()) {
      direct.queue("r-ack500").config(Map.of("leaseTime", 3)).create();
      direct.queue("r-ack500").push(Map.of("n", 1));
      CountDownLatch handled = new CountDownLatch(1);
      // renewing every 1.5 s, each renewal 60 s long, while the handler returns at once
      Consumer consumer =
          viaProxy
              .queue("r-ack500")
              .renewLease(true, 1500)
              .limit(1)
              .consume(batch -> handled.countDown());
      assertThat(handled.await(20, TimeUnit.SECONDS)).isTrue();

      List<Message> again =
          await()
              .atMost(Duration.ofSeconds(20))
              .until(() -> direct.queue("r-ack500").wait(false).pop(), m -> !m.isEmpty());
      assertThat(again).extracting(m -> m.data().get("n").asInt()).containsExactly(1);
      assertThat(proxy.refused.get()).as("the consumer's acks, all refused").isPositive();
      consumer.stop();
      assertThat(consumer.await(Duration.ofSeconds(20))).isTrue();
    }
  }

  @Test
  void aConsumerCarriesOnAgainstTheOtherBrokerWhenOneStops() throws Exception {
    Broker a = broker.startAnother();
    Broker b = broker.startAnother();
    List<String> urls = List.of("http://127.0.0.1:" + a.port(), "http://127.0.0.1:" + b.port());
    String consumerUrl =
        new Nodes(urls, LoadBalancing.AFFINITY, 128, 0)
            .order("r-fo:*:" + Queen.QUEUE_MODE)
            .getFirst();
    Broker first = consumerUrl.equals(urls.get(0)) ? a : b;
    CountDownLatch aThirdDone = new CountDownLatch(1);
    AtomicInteger handled = new AtomicInteger();
    AtomicInteger handledWhenStopped = new AtomicInteger(-1);
    Thread.ofVirtual()
        .start(
            () -> {
              try {
                aThirdDone.await();
                first.close();
                handledWhenStopped.set(handled.get());
              } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
              }
            });
    int partitions = 10;
    int perPartition = 300;
    int total = partitions * perPartition;
    try (Queen queen =
        Queen.builder()
            .urls(urls)
            .retries(3, Duration.ofMillis(50))
            .timeout(Duration.ofSeconds(10))
            .healthRetryAfter(Duration.ofMinutes(5))
            .build()) {
      queen.queue("r-fo").config(Map.of("leaseTime", 2)).create();
      Map<String, List<Integer>> seen = new ConcurrentHashMap<>();
      Consumer consumer =
          queen
              .queue("r-fo")
              .concurrency(4)
              .batch(10)
              .timeoutMillis(1000)
              .limit(total)
              .consume(
                  batch -> {
                    synchronized (seen) {
                      for (Message m : batch) {
                        seen.computeIfAbsent(m.partition(), k -> new ArrayList<>())
                            .add(m.data().get("n").asInt());
                      }
                    }
                    if (handled.addAndGet(batch.size()) >= total / 3) {
                      aThirdDone.countDown();
                    }
                  });
      for (int from = 0; from < perPartition; from += 10) {
        for (int p = 0; p < partitions; p++) {
          List<Map<String, Integer>> items = new ArrayList<>();
          for (int n = from; n < from + 10; n++) {
            items.add(Map.of("n", n));
          }
          queen.queue("r-fo").partition("p" + p).push(items);
        }
      }

      assertThat(consumer.await(Duration.ofMinutes(2))).as("consumer reached its limit").isTrue();
      assertThat(handled.get()).isEqualTo(total);
      assertThat(handledWhenStopped.get())
          .as("the consumer's broker stopped mid-run")
          .isBetween(total / 3, total - 1);
      List<Integer> expected = IntStream.range(0, perPartition).boxed().toList();
      assertThat(seen).hasSize(partitions);
      seen.forEach(
          (p, ns) -> assertThat(ns).as("partition %s: each once, in order", p).isEqualTo(expected));
      assertThat(queen.queue("r-fo").wait(false).batch(100).pop()).isEmpty();
    } finally {
      a.close();
      b.close();
    }
  }
}
