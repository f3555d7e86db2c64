package queen.client;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.IntStream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import queen.server.TestBroker;

class ConsumeTest {
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

  record Numbered(String p, int n) {}

  @Test
  void eightWorkersOverTwentyPartitionsHandleTenThousandMessagesOnceInPartitionOrder()
      throws Exception {
    int partitions = 20;
    int perPartition = 500;
    queen.queue("c-many").config(Map.of("leaseTime", 30)).create();
    for (int p = 0; p < partitions; p++) {
      List<Numbered> items = new ArrayList<>();
      for (int n = 0; n < perPartition; n++) {
        items.add(new Numbered("p" + p, n));
      }
      for (int from = 0; from < perPartition; from += 100) {
        queen.queue("c-many").partition("p" + p).push(items.subList(from, from + 100));
      }
    }

    Map<String, List<Integer>> seen = new ConcurrentHashMap<>();
    AtomicInteger handled = new AtomicInteger();
    Consumer consumer =
        queen
            .queue("c-many")
            .concurrency(8)
            .batch(25)
            .limit(partitions * perPartition)
            .consume(
                batch -> {
                  for (Message m : batch) {
                    Numbered x = m.data(Numbered.class);
                    assertThat(m.partition()).isEqualTo(x.p());
                    synchronized (seen) {
                      seen.computeIfAbsent(x.p(), k -> new ArrayList<>()).add(x.n());
                    }
                    handled.incrementAndGet();
                  }
                });
    assertThat(consumer.await(Duration.ofMinutes(2))).as("consumer ended at its limit").isTrue();

    assertThat(handled.get()).isEqualTo(partitions * perPartition);
    assertThat(consumer.processed()).isEqualTo(partitions * perPartition);
    assertThat(consumer.isRunning()).isFalse();
    List<Integer> expected = IntStream.range(0, perPartition).boxed().toList();
    assertThat(seen).hasSize(partitions);
    seen.forEach(
        (p, ns) -> assertThat(ns).as("partition %s in order, once each", p).isEqualTo(expected));
    assertThat(queen.queue("c-many").wait(false).batch(10).pop())
        .as("everything was acked")
        .isEmpty();
  }

  @Test
  void aBatchHandlerThatClearsItsListStillHasTheWholeBatchAcked() {
    for (int n = 0; n < 10; n++) {
      queen.queue("c-clear").push(Map.of("n", n));
    }
    Consumer consumer = queen.queue("c-clear").batch(10).consume(List::clear);
    try {
      // before, the list it cleared was the list acked: nothing, the batch left leased
      await()
          .atMost(Duration.ofSeconds(10))
          .until(
              () ->
                  broker.sqlLong(
                          "select coalesce(max(c.committed), -1) from queen.log_consumers c join"
                              + " queen.log_partitions p on p.id = c.partition_id join"
                              + " queen.queues q on q.id = p.queue_id where q.name = 'c-clear'")
                      == 9);
    } finally {
      consumer.stop();
    }
    assertThat(consumer.processed()).isEqualTo(10);
  }

  @Test
  void stopLetsRunningHandlersFinishAndAcksThem() throws Exception {
    queen.queue("c-stop").partition("a").push(Map.of("n", 1), Map.of("n", 2));
    CountDownLatch inHandler = new CountDownLatch(1);
    CountDownLatch release = new CountDownLatch(1);
    Consumer consumer =
        queen
            .queue("c-stop")
            .batch(10)
            .consume(
                batch -> {
                  inHandler.countDown();
                  release.await();
                });
    inHandler.await();
    Thread stopper = Thread.ofVirtual().start(consumer::stop);
    await().atMost(Duration.ofSeconds(5)).until(() -> stopper.getState() == Thread.State.WAITING);
    assertThat(consumer.isRunning()).as("stop waits for the running handler").isTrue();
    release.countDown();
    stopper.join(Duration.ofSeconds(10));
    assertThat(consumer.isRunning()).isFalse();
    assertThat(consumer.processed()).isEqualTo(2);
    assertThat(queen.queue("c-stop").wait(false).batch(10).pop())
        .as("the finished batch was acked")
        .isEmpty();
  }

  @Test
  void closingTheClientStopsItsConsumers() throws Exception {
    Queen own = Queen.connect("http://127.0.0.1:" + broker.port());
    Consumer c = own.queue("closed-under").timeoutMillis(1000).consume(batch -> {});
    own.close();
    // before, the closed client failed every pop as a network error and the workers retried
    // it for good
    assertThat(c.await(Duration.ofSeconds(10))).isTrue();
  }

  @Test
  void idleMillisEndsAConsumerThatGetsNothing() throws Exception {
    queen.queue("c-idle").create();
    Consumer consumer = queen.queue("c-idle").idleMillis(300).consume(batch -> {});
    assertThat(consumer.await(Duration.ofSeconds(10))).isTrue();
    assertThat(consumer.processed()).isZero();
  }

  @Test
  void eachHandlesInOrderAndLeavesTheRestOfABatchAfterAFailure() throws Exception {
    queen.queue("c-each").config(Map.of("retryLimit", 5)).create();
    for (int n = 0; n < 5; n++) {
      queen.queue("c-each").partition("only").push(Map.of("n", n));
    }
    List<Integer> calls = new ArrayList<>();
    AtomicInteger failures = new AtomicInteger();
    Consumer consumer =
        queen
            .queue("c-each")
            .batch(5)
            .limit(6)
            .each()
            .consume(
                m -> {
                  int n = m.data().get("n").asInt();
                  synchronized (calls) {
                    calls.add(n);
                  }
                  if (n == 2 && failures.getAndIncrement() == 0) {
                    throw new IllegalStateException("first try of 2 fails");
                  }
                });
    assertThat(consumer.await(Duration.ofSeconds(30))).isTrue();
    assertThat(calls).as("3 and 4 wait for 2's redelivery").containsExactly(0, 1, 2, 2, 3, 4);
    assertThat(consumer.failed()).isEqualTo(1);
  }

  @Test
  void eachGoesOnWithTheBatchsOtherPartitionsAfterAFailure() throws Exception {
    queen.queue("c-each2").config(Map.of("retryLimit", 5, "leaseTime", 60)).create();
    for (String p : List.of("a", "b")) {
      queen.queue("c-each2").partition(p).push(Map.of("p", p, "n", 1), Map.of("p", p, "n", 2));
    }
    AtomicInteger failures = new AtomicInteger();
    Consumer consumer =
        queen
            .queue("c-each2")
            .partitions(2)
            .batch(4)
            .limit(5)
            .each()
            .consume(
                m -> {
                  if (failures.get() == 0 && m.data().get("n").asInt() == 1) {
                    failures.incrementAndGet();
                    throw new IllegalStateException("the first message handled fails once");
                  }
                });
    // before, the other partition's messages were left unhandled until its lease of 60 s ended
    assertThat(consumer.await(Duration.ofSeconds(20))).isTrue();
    assertThat(consumer.processed()).isEqualTo(4);
    assertThat(consumer.failed()).isEqualTo(1);
  }

  // the flag one handler left set made the next one's blocking call throw: acked failed
  @Test
  void eachClearsAnInterruptFlagAHandlerLeftBeforeTheNextMessage() throws Exception {
    queen.queue("c-flag").config(Map.of("leaseTime", 60)).create();
    queen.queue("c-flag").push(Map.of("n", 0), Map.of("n", 1));
    Consumer consumer =
        queen
            .queue("c-flag")
            .batch(2)
            .limit(2)
            .each()
            .consume(
                m -> {
                  if (m.data().get("n").asInt() == 0) {
                    Thread.currentThread().interrupt();
                  } else {
                    Thread.sleep(1);
                  }
                });
    assertThat(consumer.await(Duration.ofSeconds(20))).isTrue();
    assertThat(consumer.processed()).isEqualTo(2);
    assertThat(consumer.failed()).isZero();
  }

  // closed at once, the client refused those acks, and the batches came again at their leases' end
  @Test
  void aClientClosedFromAHandlerAcksTheBatchesInFlightFirst() throws Exception {
    queen.queue("c-close").config(Map.of("leaseTime", 60)).create();
    queen.queue("c-close").partition("a").push(Map.of("n", 0));
    queen.queue("c-close").partition("b").push(Map.of("n", 1));
    Queen own = Queen.connect("http://127.0.0.1:" + broker.port());
    CountDownLatch bothHeld = new CountDownLatch(2);
    Consumer consumer =
        own.queue("c-close")
            .concurrency(2)
            .batch(1)
            .consume(
                batch -> {
                  bothHeld.countDown();
                  assertThat(bothHeld.await(10, TimeUnit.SECONDS)).isTrue();
                  if (batch.getFirst().data().get("n").asInt() == 0) {
                    own.close();
                  }
                });
    assertThat(consumer.await(Duration.ofSeconds(20))).isTrue();
    assertThat(consumer.processed()).isEqualTo(2);
    assertThat(
            broker.sqlLong(
                "select count(*) from queen.log_consumers c join queen.log_partitions p"
                    + " on p.id = c.partition_id join queen.queues q on q.id = p.queue_id"
                    + " where q.name = 'c-close' and c.committed = 0"))
        .as("both partitions' messages acked")
        .isEqualTo(2);
  }

  @Test
  void renewLeaseKeepsASlowHandlersBatchLeased() throws Exception {
    // 3 s: the first renewal, 300 ms in, lands within the lease on a loaded machine
    queen.queue("c-renew").config(Map.of("leaseTime", 3)).create();
    queen.queue("c-renew").push(Map.of("slow", true));
    AtomicInteger deliveries = new AtomicInteger();
    Consumer consumer =
        queen
            .queue("c-renew")
            .renewLease(true, 300)
            .limit(1)
            .consume(
                batch -> {
                  deliveries.incrementAndGet();
                  Thread.sleep(7500); // slow work, 2.5 lease times long
                });
    assertThat(consumer.await(Duration.ofSeconds(20))).isTrue();
    assertThat(deliveries.get()).isEqualTo(1);
    assertThat(queen.queue("c-renew").wait(false).pop())
        .as("the ack after the lease time was accepted")
        .isEmpty();
  }

  @Test
  void theRenewerIsAPlatformThreadThatHandlersHoldingEveryCarrierCannotStarve()
      throws InterruptedException {
    // a virtual renewer waited for CPU-bound handlers to return, and their leases ended meanwhile
    Thread renewer = BatchRenewal.start(queen, "a-lease", 60_000, () -> false, "renew-test");
    assertThat(renewer.isVirtual()).isFalse();
    assertThat(renewer.isDaemon()).as("never holds the JVM open").isTrue();
    renewer.interrupt();
    renewer.join(Duration.ofSeconds(5));
    assertThat(renewer.isAlive()).as("ends when the handler returns").isFalse();
  }

  @Test
  void aRenewalAsksForItsSecondsAndALongerLeaseKeepsItsEnd() {
    queen.queue("c-renew-s").config(Map.of("leaseTime", 10)).create();
    queen.queue("c-renew-s").push(Map.of("n", 1));
    String lease = queen.queue("c-renew-s").wait(false).pop().getFirst().leaseId();
    LeaseRenewal longer = queen.renew(lease, 600);
    assertThat(longer.success()).isTrue();
    assertThat(longer.expiresAt()).isAfter(java.time.Instant.now().plusSeconds(500));
    assertThat(queen.renew(lease).expiresAt())
        .as("60 s asks for less")
        .isEqualTo(longer.expiresAt());
  }

  @Test
  void aHandlerThatLeavesItsThreadInterruptedNeitherCancelsItsAckNorEndsTheWorker()
      throws Exception {
    for (int n = 0; n < 3; n++) {
      queen.queue("c-interrupt").push(Map.of("n", n));
    }
    AtomicInteger handled = new AtomicInteger();
    Consumer consumer =
        queen
            .queue("c-interrupt")
            .limit(3)
            .each()
            .consume(
                m -> {
                  handled.incrementAndGet();
                  Thread.currentThread().interrupt(); // restored after an InterruptedException
                });
    assertThat(consumer.await(Duration.ofSeconds(20))).isTrue();
    assertThat(handled.get()).isEqualTo(3);
    assertThat(queen.queue("c-interrupt").wait(false).pop()).as("all three acked").isEmpty();
  }

  // HttpClient.close() waited for pending exchanges: a long-poll on another thread held a close
  // for its whole timeout (19 s measured by helper-142)
  @Test
  void closeEndsAPopInFlightOnAnotherThreadAtOnce() throws Exception {
    Queen closing = Queen.connect("http://127.0.0.1:" + broker.port());
    CompletableFuture<List<Message>> pop =
        CompletableFuture.supplyAsync(
            () -> closing.queue("never-pushed").timeoutMillis(30_000).pop(),
            Executors.newVirtualThreadPerTaskExecutor());
    await()
        .atMost(Duration.ofSeconds(10))
        .until(() -> broker.metric("queen_queue_parked_consumers", "queue=\"never-pushed\"") >= 1);
    CompletableFuture.runAsync(closing::close).get(5, TimeUnit.SECONDS);
    assertThatThrownBy(() -> pop.get(5, TimeUnit.SECONDS))
        .hasCauseInstanceOf(IllegalStateException.class);
  }

  // a list was one message whose payload was the list (helper-142)
  @Test
  void aTransactionPushesEachItemOfAList() {
    queen.transaction().queue("tx-list").push(List.of(Map.of("n", 1), Map.of("n", 2))).commit();
    assertThat(queen.queue("tx-list").batch(10).wait(false).pop())
        .extracting(m -> m.data().get("n").asInt())
        .containsExactly(1, 2);
  }
}
