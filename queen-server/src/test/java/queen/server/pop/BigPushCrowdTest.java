package queen.server.pop;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import queen.server.Broker;
import queen.server.TestBroker;
import queen.server.Wire;

/**
 * Sixteen consumers of two groups, each on one of two brokers, take big pushes a few messages at a
 * time: pops after a push's first get stubs, answered from the decoded push or read again on the
 * broker that never decoded it. Every message reaches each group exactly once, in order per
 * partition.
 */
class BigPushCrowdTest {
  @RegisterExtension static final TestBroker broker = new TestBroker();

  private static final int PARTITIONS = 4;
  private static final int PUSHES = 3;
  private static final int PER_PUSH = 60;
  private static final int TOTAL = PARTITIONS * PUSHES * PER_PUSH;
  private static final String BLOB_READS = "queen_segment_blob_reads_total";

  private void fill() {
    Random random = new Random(11);
    for (int push = 0; push < PUSHES; push++) {
      for (int p = 0; p < PARTITIONS; p++) {
        List<ObjectNode> items = new ArrayList<>();
        for (int i = 0; i < PER_PUSH; i++) {
          int n = push * PER_PUSH + i;
          StringBuilder pad = new StringBuilder();
          for (int c = 0; c < 300; c++) {
            pad.append((char) ('a' + random.nextInt(26)));
          }
          items.add(
              Wire.item(
                  "crowd",
                  "p" + p,
                  "p" + p + "-" + n,
                  Wire.object().put("n", n).put("pad", pad.toString())));
        }
        assertThat(broker.post("/api/v1/push", Wire.items(items)).status()).isEqualTo(201);
      }
    }
  }

  /** Pops and acks through {@code at} until the group has every message; records what it got. */
  private Void consume(Broker at, String group, Map<String, List<Integer>> got) {
    String path =
        "/api/v1/pop/queue/crowd?wait=true&timeout=2000&consumerGroup=" + group + "&batch=";
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(150);
    while (total(got) < TOTAL && System.nanoTime() < deadline) {
      int batch = 1 + ThreadLocalRandom.current().nextInt(5);
      TestBroker.Reply r = at == null ? broker.get(path + batch) : broker.get(at, path + batch);
      if (r.status() != 200) {
        continue;
      }
      JsonNode popped = r.json();
      if (popped.get("messages").isEmpty()) {
        continue;
      }
      for (JsonNode m : popped.get("messages")) {
        // recorded before the ack: the partition's next lease comes after it
        got.get(m.get("partition").asText()).add(m.get("data").get("n").asInt());
      }
      ObjectNode acks = Wire.acks(popped, "completed", null);
      TestBroker.Reply acked =
          at == null
              ? broker.post("/api/v1/ack/batch", acks)
              : broker.post(at, "/api/v1/ack/batch", acks);
      assertThat(acked.json()).allSatisfy(a -> assertThat(a.get("success").asBoolean()).isTrue());
    }
    return null;
  }

  private static int total(Map<String, List<Integer>> got) {
    return got.values().stream().mapToInt(List::size).sum();
  }

  @Test
  void everyMessageOfBigPushesReachesEachGroupOnceInOrderAcrossTwoBrokers() throws Exception {
    fill();
    Map<String, Map<String, List<Integer>>> byGroup = new ConcurrentHashMap<>();
    for (String g : List.of("g1", "g2")) {
      Map<String, List<Integer>> got = new ConcurrentHashMap<>();
      for (int p = 0; p < PARTITIONS; p++) {
        got.put("p" + p, java.util.Collections.synchronizedList(new ArrayList<>()));
      }
      byGroup.put(g, got);
    }
    try (Broker other = broker.startAnother();
        ExecutorService consumers = Executors.newVirtualThreadPerTaskExecutor()) {
      List<Future<Void>> running = new ArrayList<>();
      for (int c = 0; c < 16; c++) {
        String group = c % 2 == 0 ? "g1" : "g2";
        Broker at = c % 4 < 2 ? null : other;
        running.add(consumers.submit(() -> consume(at, group, byGroup.get(group))));
      }
      for (Future<Void> f : running) {
        f.get(180, TimeUnit.SECONDS);
      }
      assertThat(
              broker.metric("queen_segment_cache_hits_total", "")
                  + broker.metric(other, "queen_segment_cache_hits_total", ""))
          .as("pops answered from a decoded push")
          .isPositive();
      assertThat(broker.metric(BLOB_READS, "") + broker.metric(other, BLOB_READS, ""))
          .as("stubs of pushes the other broker decoded, read again")
          .isPositive();
    }
    for (Map.Entry<String, Map<String, List<Integer>>> g : byGroup.entrySet()) {
      for (Map.Entry<String, List<Integer>> p : g.getValue().entrySet()) {
        List<Integer> seen = p.getValue();
        assertThat(new HashSet<>(seen))
            .as(g.getKey() + " " + p.getKey() + " once each")
            .hasSize(seen.size());
        assertThat(seen)
            .as(g.getKey() + " " + p.getKey() + " every message, in order")
            .isEqualTo(java.util.stream.IntStream.range(0, PUSHES * PER_PUSH).boxed().toList());
      }
    }
  }
}
