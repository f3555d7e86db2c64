package queen.server.http;

import static org.assertj.core.api.Assertions.assertThat;
import static queen.server.Wire.item;
import static queen.server.Wire.object;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.stream.IntStream;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import queen.server.TestBroker;
import queen.server.Wire;

/**
 * 64 consumers popping a 200-partition queue through the wildcard route at once: every message
 * delivered exactly once, in order per partition, with no deadlock and no long lock wait.
 */
abstract class ConcurrentWildcardPopContract {
  private static final int PARTITIONS = 200;
  private static final int PER_PARTITION = 100;
  private static final int TOTAL = PARTITIONS * PER_PARTITION;
  private static final int CONSUMERS = 64;

  /** The broker under test: each subclass runs the contract on one candidate path. */
  abstract TestBroker broker();

  @BeforeEach
  void fill() {
    if (broker().sqlLong("select count(*) from queen.queues where name = 'load'") > 0) {
      return;
    }
    // 50 pushes, each two messages to every partition: 50 segments of 2 per partition
    for (int round = 0; round < PER_PARTITION / 2; round++) {
      List<ObjectNode> items = new ArrayList<>();
      for (int p = 0; p < PARTITIONS; p++) {
        for (int k = 0; k < 2; k++) {
          int n = round * 2 + k;
          items.add(item("load", "p" + p, "p" + p + "-" + n, object().put("n", n)));
        }
      }
      assertThat(broker().post("/api/v1/push", Wire.items(items)).status()).isEqualTo(201);
    }
  }

  @Test
  void queueModeConsumersGetEveryMessageExactlyOnceInOrder() throws Exception {
    consumeEverything("__QUEUE_MODE__");
  }

  @Test
  void aBrandNewGroupRacingItsFirstContactGetsEveryMessageExactlyOnceInOrder() throws Exception {
    consumeEverything("racing-group");
  }

  private void consumeEverything(String group) throws Exception {
    Map<String, List<Integer>> perPartition = new ConcurrentHashMap<>();
    AtomicInteger delivered = new AtomicInteger();
    AtomicInteger duplicates = new AtomicInteger();
    AtomicInteger failedAcks = new AtomicInteger();
    AtomicLong pops = new AtomicLong();
    AtomicLong overloaded = new AtomicLong();
    Map<String, Boolean> seen = new ConcurrentHashMap<>();
    long deadlocksBefore = deadlocks();
    AtomicInteger longLockWaits = new AtomicInteger();
    CyclicBarrier start = new CyclicBarrier(CONSUMERS);
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(120);

    ScheduledExecutorService sampler = Executors.newSingleThreadScheduledExecutor();
    sampler.scheduleAtFixedRate(
        () -> longLockWaits.accumulateAndGet((int) longLockWaits(), Math::max),
        0,
        100,
        TimeUnit.MILLISECONDS);
    long began = System.nanoTime();
    try (var pool = Executors.newVirtualThreadPerTaskExecutor()) {
      List<Future<?>> workers = new ArrayList<>();
      for (int w = 0; w < CONSUMERS; w++) {
        workers.add(
            pool.submit(
                () -> {
                  start.await();
                  ThreadLocalRandom rnd = ThreadLocalRandom.current();
                  while (delivered.get() < TOTAL && System.nanoTime() < deadline) {
                    String path =
                        "/api/v1/pop/queue/load?consumerGroup="
                            + group
                            + "&batch="
                            + rnd.nextInt(1, 41)
                            + "&partitions="
                            + rnd.nextInt(1, 4);
                    TestBroker.Reply r = broker().get(path);
                    pops.incrementAndGet();
                    if (r.status() == 204) {
                      Thread.yield();
                      continue;
                    }
                    if (r.status() == 503) {
                      // the serving limiter's overload answer, which Queen's clients retry
                      overloaded.incrementAndGet();
                      continue;
                    }
                    JsonNode body = r.json();
                    List<JsonNode> messages = new ArrayList<>();
                    body.get("messages").forEach(messages::add);
                    for (JsonNode m : messages) {
                      String key = m.get("partition").asText() + "/" + m.get("data").get("n");
                      if (seen.putIfAbsent(key, true) != null) {
                        duplicates.incrementAndGet();
                      }
                      perPartition
                          .computeIfAbsent(
                              m.get("partition").asText(),
                              k -> Collections.synchronizedList(new ArrayList<>()))
                          .add(m.get("data").get("n").asInt());
                    }
                    delivered.addAndGet(messages.size());
                    ackInRandomChunks(group, messages, failedAcks);
                  }
                  return null;
                }));
      }
      for (Future<?> f : workers) {
        f.get();
      }
    } finally {
      sampler.shutdownNow();
    }
    double seconds = (System.nanoTime() - began) / 1e9;
    System.out.printf(
        "wildcard %s: %d pops (%d messages) by %d consumers in %.1f s: %.0f pops/s%n",
        group, pops.get(), delivered.get(), CONSUMERS, seconds, pops.get() / seconds);

    assertThat(delivered.get()).as("finished without stalls").isEqualTo(TOTAL);
    assertThat(duplicates.get()).isZero();
    assertThat(failedAcks.get()).isZero();
    assertThat(overloaded.get()).as("pops refused as overload").isLessThan(pops.get() / 20);
    assertThat(perPartition).hasSize(PARTITIONS);
    List<Integer> inOrder = IntStream.range(0, PER_PARTITION).boxed().toList();
    perPartition.forEach((p, ns) -> assertThat(ns).as("FIFO in %s", p).isEqualTo(inOrder));
    assertThat(deadlocks() - deadlocksBefore).isZero();
    assertThat(longLockWaits.get()).as("lock waits over 1 s").isZero();
  }

  /** Acks a batch as a client might: shuffled, in up to three requests, each with its lease. */
  private void ackInRandomChunks(String group, List<JsonNode> messages, AtomicInteger failedAcks) {
    List<JsonNode> shuffled = new ArrayList<>(messages);
    Collections.shuffle(shuffled);
    int chunks = Math.min(shuffled.size(), ThreadLocalRandom.current().nextInt(1, 4));
    int size = (shuffled.size() + chunks - 1) / chunks;
    for (int from = 0; from < shuffled.size(); from += size) {
      ObjectNode body = object().put("consumerGroup", group);
      ArrayNode acks = body.putArray("acknowledgments");
      for (JsonNode m : shuffled.subList(from, Math.min(from + size, shuffled.size()))) {
        acks.addObject()
            .put("transactionId", m.get("transactionId").asText())
            .put("partitionId", m.get("partitionId").asText())
            .put("leaseId", m.get("leaseId").asText());
      }
      for (JsonNode result : broker().post("/api/v1/ack/batch", body).json()) {
        if (!result.get("success").asBoolean()) {
          failedAcks.incrementAndGet();
        }
      }
    }
  }

  private long deadlocks() {
    return broker()
        .sqlLong(
            "select deadlocks from pg_stat_database where datname = '"
                + broker().db().database()
                + "'");
  }

  private long longLockWaits() {
    return broker()
        .sqlLong(
            "select count(*) from pg_stat_activity where datname = '"
                + broker().db().database()
                + "' and wait_event_type = 'Lock' and now() - query_start > interval '1 second'");
  }
}
