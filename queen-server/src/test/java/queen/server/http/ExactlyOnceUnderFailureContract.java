package queen.server.http;

import static org.assertj.core.api.Assertions.assertThat;
import static queen.server.Wire.item;
import static queen.server.Wire.object;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import queen.server.TestBroker;
import queen.server.Wire;

/**
 * Producers and failing consumers at once. The race that matters: a push that commits late must
 * never be skipped by a consumer that already acked later offsets. At the end every message was
 * processed by exactly one successful batch, or is a dead letter after retryLimit + 1 charged
 * failures; nothing is lost; deliveries of each partition are in order across redeliveries.
 */
abstract class ExactlyOnceUnderFailureContract {
  /** The broker under test: plain PostgreSQL or Citus, by subclass. */
  abstract TestBroker broker();

  /** Messages each producer pushes: the volume that the target settles within the deadline. */
  abstract int perProducer();

  private static final String QUEUE = "chaos";
  private static final int PRODUCERS = 8;
  private static final int PARTITIONS = 50;
  private static final int CONSUMERS = 16;
  private static final int RETRY_LIMIT = 1;

  /** One delivery: the transaction ids of a batch of one partition, in delivered order. */
  private record Delivery(String partition, List<String> txns) {}

  private final Map<String, String> pushedTo = new ConcurrentHashMap<>();
  private final Map<String, AtomicInteger> processed = new ConcurrentHashMap<>();
  private final Map<String, AtomicInteger> charged = new ConcurrentHashMap<>();
  private final Map<String, List<Delivery>> deliveries = new ConcurrentHashMap<>();
  private final AtomicInteger settled = new AtomicInteger();

  @Test
  void everyMessageIsProcessedExactlyOnceOrDeadLetteredWhileProducersRun() throws Exception {
    new Wire(broker())
        .configure(QUEUE, object().put("leaseTime", 1).put("retryLimit", RETRY_LIMIT));
    AtomicBoolean producing = new AtomicBoolean(true);
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(150);
    try (ExecutorService pool = Executors.newVirtualThreadPerTaskExecutor()) {
      List<Future<?>> producers = new ArrayList<>();
      for (int p = 0; p < PRODUCERS; p++) {
        int producer = p;
        producers.add(pool.submit(() -> produce(producer)));
      }
      List<Future<?>> consumers = new ArrayList<>();
      for (int c = 0; c < CONSUMERS; c++) {
        consumers.add(
            pool.submit(
                () -> {
                  while ((producing.get() || settled.get() < PRODUCERS * perProducer())
                      && System.nanoTime() < deadline) {
                    consumeOnce();
                  }
                  return null;
                }));
      }
      for (Future<?> f : producers) {
        f.get();
      }
      producing.set(false);
      for (Future<?> f : consumers) {
        f.get();
      }
    }

    Map<String, Long> offsets = offsets();
    Map<String, Long> dead = deadLetters();
    assertThat(offsets).as("every push stored").hasSize(PRODUCERS * perProducer());
    List<String> lost = new ArrayList<>();
    for (String txn : offsets.keySet()) {
      int done = processed.getOrDefault(txn, new AtomicInteger()).get();
      if (dead.containsKey(txn)) {
        assertThat(done).as("%s is dead and was processed", txn).isZero();
        assertThat(charged.get(txn).get())
            .as("failures charged to %s", txn)
            .isEqualTo(RETRY_LIMIT + 1);
      } else if (done != 1) {
        lost.add(txn + " processed " + done + " times");
      }
    }
    assertThat(lost).as("processed exactly once").isEmpty();
    deliveries.forEach((partition, list) -> assertInOrder(partition, list, offsets));
    System.out.printf(
        "chaos: %d messages, %d dead letters, %d deliveries%n",
        offsets.size(), dead.size(), deliveries.values().stream().mapToInt(List::size).sum());
  }

  private Void produce(int producer) {
    ThreadLocalRandom rnd = ThreadLocalRandom.current();
    int sent = 0;
    while (sent < perProducer()) {
      int n = Math.min(rnd.nextInt(1, 51), perProducer() - sent);
      List<ObjectNode> items = new ArrayList<>();
      for (int k = 0; k < n; k++) {
        String txn = "m-" + producer + "-" + (sent + k);
        String partition = "p" + rnd.nextInt(PARTITIONS);
        pushedTo.put(txn, partition);
        items.add(item(QUEUE, partition, txn, object().put("t", txn)));
      }
      TestBroker.Reply r = broker().post("/api/v1/push", Wire.items(items));
      assertThat(r.status()).isEqualTo(201);
      sent += n;
    }
    return null;
  }

  private void consumeOnce() {
    ThreadLocalRandom rnd = ThreadLocalRandom.current();
    TestBroker.Reply r =
        broker()
            .get(
                "/api/v1/pop/queue/"
                    + QUEUE
                    + "?batch="
                    + rnd.nextInt(1, 51)
                    + "&partitions="
                    + rnd.nextInt(1, 3));
    if (r.status() == 204) {
      Thread.yield();
      return;
    }
    Map<String, List<JsonNode>> byPartition = new HashMap<>();
    for (JsonNode m : r.json().get("messages")) {
      byPartition.computeIfAbsent(m.get("partition").asText(), k -> new ArrayList<>()).add(m);
    }
    byPartition.forEach(
        (partition, messages) -> {
          deliveries
              .computeIfAbsent(
                  partition, k -> java.util.Collections.synchronizedList(new ArrayList<>()))
              .add(
                  new Delivery(
                      partition,
                      messages.stream().map(m -> m.get("transactionId").asText()).toList()));
        });
    int fate = rnd.nextInt(100);
    if (fate < 2) {
      return; // crash: no ack, the lease expires and the batch comes back at no charge
    }
    String status = fate < 12 ? "failed" : "completed";
    for (List<JsonNode> messages : byPartition.values()) {
      ack(messages, status);
    }
  }

  private void ack(List<JsonNode> messages, String status) {
    ObjectNode body = object();
    ArrayNode acks = body.putArray("acknowledgments");
    messages.forEach(m -> acks.add(Wire.ack(m, status, "chaos")));
    JsonNode answer = broker().post("/api/v1/ack/batch", body).json();
    boolean chargedBatch = false;
    for (int i = 0; i < messages.size(); i++) {
      JsonNode a = answer.get(i);
      String txn = messages.get(i).get("transactionId").asText();
      if (!a.get("success").asBoolean()) {
        continue;
      }
      if (status.equals("completed")) {
        processed.computeIfAbsent(txn, k -> new AtomicInteger()).incrementAndGet();
        settled.incrementAndGet();
      } else if (a.get("dlq").asBoolean()) {
        charged.computeIfAbsent(txn, k -> new AtomicInteger()).incrementAndGet();
        settled.incrementAndGet();
      } else {
        chargedBatch = true; // the first failed ack of the batch charged and released it
      }
    }
    if (chargedBatch) {
      messages.forEach(
          m ->
              charged
                  .computeIfAbsent(m.get("transactionId").asText(), k -> new AtomicInteger())
                  .incrementAndGet());
    }
  }

  /**
   * Each delivery is a run of consecutive offsets, and each next delivery of the partition starts
   * where the previous one started (a redelivery) or right after it ended.
   */
  private static void assertInOrder(String partition, List<Delivery> list, Map<String, Long> at) {
    long expectedStart = 0;
    long lastStart = -1;
    for (Delivery d : list) {
      List<Long> offs = d.txns().stream().map(at::get).toList();
      for (int i = 1; i < offs.size(); i++) {
        assertThat(offs.get(i)).as("consecutive in %s", partition).isEqualTo(offs.get(i - 1) + 1);
      }
      assertThat(offs.getFirst())
          .as("delivery of %s starts at the cursor", partition)
          .isIn(expectedStart, lastStart);
      lastStart = offs.getFirst();
      expectedStart = offs.getLast() + 1;
    }
  }

  /**
   * The stored offset of every pushed transaction id, as the transactionId index holds it: every
   * (partition, hash, offset) pair of the queue, matched to the ids' hashes. (Not the index's
   * lookup function per id: on Citus that would run a distributed query inside another.)
   */
  private Map<String, Long> offsets() throws Exception {
    Map<String, Long> byHash = new HashMap<>();
    Map<String, Long> out = new HashMap<>();
    try (Connection c = broker().connect()) {
      try (PreparedStatement ps =
          c.prepareStatement(
              "select p.name, t.entries[2 * e.i - 1], t.entries[2 * e.i]"
                  + " from queen.log_txn_index t"
                  + " join queen.log_partitions p on p.id = t.partition_id"
                  + " join queen.queues q on q.id = p.queue_id"
                  + " cross join lateral generate_series(1, cardinality(t.entries) / 2) as e(i)"
                  + " where q.name = ?")) {
        ps.setString(1, QUEUE);
        try (ResultSet rs = ps.executeQuery()) {
          while (rs.next()) {
            String key = rs.getString(1) + "/" + rs.getLong(2);
            assertThat(byHash.put(key, rs.getLong(3))).as("one offset each").isNull();
          }
        }
      }
      try (PreparedStatement ps =
          c.prepareStatement(
              "select u.txn, queen.txn_hash(u.txn) from unnest(?::text[]) as u(txn)")) {
        ps.setArray(1, c.createArrayOf("text", pushedTo.keySet().toArray()));
        try (ResultSet rs = ps.executeQuery()) {
          while (rs.next()) {
            Long off = byHash.get(pushedTo.get(rs.getString(1)) + "/" + rs.getLong(2));
            if (off != null) {
              out.put(rs.getString(1), off);
            }
          }
        }
      }
    }
    return out;
  }

  private Map<String, Long> deadLetters() throws Exception {
    return txnMap("select transaction_id, msg_offset from queen.dead_letters");
  }

  private Map<String, Long> txnMap(String query) throws Exception {
    Map<String, Long> out = new HashMap<>();
    try (Connection c = broker().connect();
        Statement st = c.createStatement();
        ResultSet rs = st.executeQuery(query)) {
      while (rs.next()) {
        out.put(rs.getString(1), rs.getLong(2));
      }
    }
    return out;
  }
}
