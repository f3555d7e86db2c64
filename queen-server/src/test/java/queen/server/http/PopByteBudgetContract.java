package queen.server.http;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import queen.server.TestBroker;
import queen.server.Wire;

/**
 * QUEEN_POP_MAX_BYTES: a pop of big payloads stops near its byte budget whatever its batch, so that
 * batch x payload size can never claim more than the broker's heap holds, and nothing is skipped or
 * delivered twice across the shortened batches.
 */
abstract class PopByteBudgetContract {
  static final int BUDGET = 100_000;
  private static final int PAD = 10_000;
  private static final String SIZES =
      " from queen.log_segments s join queen.log_partitions p on p.id = s.partition_id"
          + " join queen.queues q on q.id = p.queue_id where q.name = 'sizes'";

  /** The broker under test, started with QUEEN_POP_MAX_BYTES = {@link #BUDGET}. */
  abstract TestBroker broker();

  @Test
  void compressiblePayloadsAreCountedDecodedAndEveryMessageComesOnceInOrder() {
    // 'x' padding compresses to almost nothing: a budget on stored bytes would not bite
    for (int push = 0; push < 4; push++) {
      push("big", "p", push * 10, 10, PAD);
    }
    JsonNode first = pop("/api/v1/pop/queue/big/partition/p?batch=100");
    assertThat(first.get("messages").size())
        .as("a pop of 40 messages of 10 kB under a 100 kB budget")
        .isBetween(9, 11);
    wire().ackAll(first);
    List<Integer> seen = new ArrayList<>(Wire.numbers(first));
    while (seen.size() < 40) {
      JsonNode next = pop("/api/v1/pop/queue/big/partition/p?batch=100");
      assertThat(payloadBytes(next)).isLessThanOrEqualTo(BUDGET + PAD + 100);
      seen.addAll(Wire.numbers(next));
      wire().ackAll(next);
    }
    assertThat(seen).containsExactlyElementsOf(range(40));
    assertThat(broker().get("/api/v1/pop/queue/big/partition/p?batch=100").status()).isEqualTo(204);
  }

  @Test
  void segmentsWrittenBeforeTheirSizeWasRecordedAreSizedFromTheirHeader() {
    for (int push = 0; push < 4; push++) {
      push("legacy", "p", push * 10, 10, PAD);
    }
    broker()
        .sql(
            "update queen.log_segments s set raw_bytes = null from queen.log_partitions p,"
                + " queen.queues q where p.id = s.partition_id and q.id = p.queue_id"
                + " and q.name = 'legacy'");
    JsonNode first = pop("/api/v1/pop/queue/legacy/partition/p?batch=100");
    assertThat(first.get("messages").size())
        .as("compressed, the 40 messages are stored in a few kB")
        .isBetween(9, 11);
  }

  @Test
  void eachPushReadCountsAtLeastItsStoredSize() {
    // incompressible payloads; each group cursor sits at its push's last message, so a pop of
    // one message per partition still makes the broker receive every whole push
    Random random = new Random(7);
    for (int p = 0; p < 5; p++) {
      List<ObjectNode> items = new ArrayList<>();
      for (int n = 0; n < 10; n++) {
        StringBuilder hex = new StringBuilder();
        random.ints(30_000, 0, 16).forEach(d -> hex.append(Character.forDigit(d, 16)));
        items.add(
            Wire.item(
                "stored",
                "p" + p,
                "stored-" + p + "-" + n,
                Wire.object().put("hex", hex.toString())));
      }
      assertThat(broker().post("/api/v1/push", Wire.items(items)).status()).isEqualTo(201);
      for (int taken = 0; taken < 9; ) {
        JsonNode popped = pop("/api/v1/pop/queue/stored/partition/p" + p + "?batch=" + (9 - taken));
        wire().ackAll(popped);
        taken += popped.get("messages").size();
      }
    }
    JsonNode tails = pop("/api/v1/pop/queue/stored?batch=100&partitions=5");
    assertThat(tails.get("messages").size())
        .as("the first push read, some 150 kB stored, passes the 100 kB budget")
        .isEqualTo(1);
  }

  @Test
  void aMessageBiggerThanTheBudgetGoesOutAlone() {
    push("huge", "p", 0, 3, BUDGET + 50_000); // one segment of three
    List<Integer> seen = new ArrayList<>();
    for (int i = 0; i < 3; i++) {
      JsonNode one = pop("/api/v1/pop/queue/huge/partition/p?batch=10");
      assertThat(Wire.numbers(one)).containsExactly(i);
      seen.addAll(Wire.numbers(one));
      wire().ackAll(one);
    }
    assertThat(seen).containsExactly(0, 1, 2);
  }

  @Test
  void partitionsOfOnePopShareTheBudget() {
    for (int p = 0; p < 5; p++) {
      push("shared", "p" + p, 0, 5, PAD);
    }
    JsonNode first = pop("/api/v1/pop/queue/shared?batch=100&partitions=5");
    assertThat(first.get("messages").size())
        .as("25 messages of 10 kB over five partitions, one 100 kB budget")
        .isBetween(9, 11);
    wire().ackAll(first);
    int total = first.get("messages").size();
    while (total < 25) {
      JsonNode next = pop("/api/v1/pop/queue/shared?batch=100&partitions=5");
      assertThat(payloadBytes(next)).isLessThanOrEqualTo(BUDGET + PAD + 100);
      total += next.get("messages").size();
      wire().ackAll(next);
    }
    assertThat(total).isEqualTo(25);
  }

  @Test
  void concurrentConsumersUnderTheBudgetGetEveryMessageOnceInPartitionOrder() throws Exception {
    int partitions = 4;
    int perPartition = 60;
    Map<String, List<Integer>> got = new ConcurrentHashMap<>();
    AtomicInteger delivered = new AtomicInteger();
    try (ExecutorService pool = Executors.newVirtualThreadPerTaskExecutor()) {
      List<Future<?>> tasks = new ArrayList<>();
      for (int p = 0; p < partitions; p++) {
        String partition = "c" + p;
        got.put(partition, Collections.synchronizedList(new ArrayList<>()));
        tasks.add(
            pool.submit(
                () -> {
                  for (int from = 0; from < perPartition; from += 6) {
                    push("crowd", partition, from, 6, 3_000);
                  }
                }));
      }
      for (int c = 0; c < 8; c++) {
        tasks.add(
            pool.submit(
                () -> {
                  while (delivered.get() < partitions * perPartition) {
                    TestBroker.Reply r =
                        broker()
                            .get(
                                "/api/v1/pop/queue/crowd?batch=50&partitions=2&wait=true&timeout=200");
                    if (r.status() == 204) {
                      continue;
                    }
                    JsonNode answer = r.json();
                    for (JsonNode m : answer.get("messages")) {
                      got.get(m.get("partition").asText()).add(m.get("data").get("n").asInt());
                      delivered.incrementAndGet();
                    }
                    wire().ackAll(answer);
                  }
                }));
      }
      for (Future<?> t : tasks) {
        t.get(120, TimeUnit.SECONDS);
      }
    }
    assertThat(delivered.get()).isEqualTo(partitions * perPartition);
    got.forEach(
        (partition, ns) -> assertThat(ns).as(partition).containsExactlyElementsOf(range(60)));
  }

  @Test
  void everyWriterOfASegmentRecordsItsDecodedSize() {
    push("sizes", "p", 0, 2, PAD);
    ObjectNode tx = Wire.object();
    tx.putArray("operations")
        .addObject()
        .put("type", "push")
        .putArray("items")
        .add(Wire.item("sizes", "p", "sizes-tx", Wire.object().put("n", 2)));
    assertThat(broker().post("/api/v1/transaction", tx).status()).isEqualTo(200);
    wire().configure("sizes", Wire.object().put("retryLimit", 0));
    JsonNode popped = pop("/api/v1/pop/queue/sizes/partition/p?batch=10");
    wire().ackAll(popped, "failed", "to the dead letters");
    String pid = popped.get("messages").get(0).get("partitionId").asText();
    assertThat(
            broker().post("/api/v1/messages/" + pid + "/sizes-p-0/retry", Wire.object()).status())
        .isEqualTo(200);
    long before = broker().sqlLong("select s.raw_bytes" + SIZES + " and s.base_offset = 0");
    assertThat(broker().delete("/api/v1/messages/" + pid + "/sizes-p-1").status()).isEqualTo(200);

    assertThat(broker().sqlLong("select count(*) from queen.log_segments where raw_bytes is null"))
        .as("segments a pop would count by their stored size")
        .isZero();
    assertThat(broker().sqlLong("select count(*)" + SIZES)).isEqualTo(3);
    assertThat(broker().sqlLong("select s.raw_bytes" + SIZES + " and s.base_offset = 0"))
        .as("a deleted message leaves a smaller segment")
        .isLessThan(before - PAD);
  }

  @Test
  void aPageOfDeadLettersEndsAtTheBudgetAndTheNextStartsAfterIt() {
    wire().configure("dead", Wire.object().put("retryLimit", 0));
    push("dead", "p", 0, 5, 40_000);
    for (int failed = 0; failed < 5; ) {
      JsonNode popped = pop("/api/v1/pop/queue/dead/partition/p?batch=10");
      wire().ackAll(popped, "failed", "too big");
      failed += popped.get("messages").size();
    }
    List<String> seen = new ArrayList<>();
    int offset = 0;
    while (offset < 5) {
      JsonNode page = broker().get("/api/v1/dlq?queue=dead&limit=100&offset=" + offset).json();
      assertThat(page.get("total").asInt()).isEqualTo(5);
      int n = page.get("messages").size();
      assertThat(n)
          .as("40 kB letters under a 100 kB budget, from %d", offset)
          .isEqualTo(Math.min(3, 5 - offset));
      page.get("messages").forEach(m -> seen.add(m.get("transactionId").asText()));
      offset += n;
    }
    assertThat(seen).doesNotHaveDuplicates().hasSize(5);
  }

  @Test
  void aMinimumPopWaitEndsOnceWhatWasPushedPassesTheBudget() {
    // waiting for a fuller batch gains nothing once what is pushed would end the pop anyway
    wire().configure("held", Wire.object().put("minPopWaitTime", 30_000));
    assertThat(broker().get("/api/v1/pop/queue/held?batch=100").status())
        .as("the group's first contact, after which pops read the ring")
        .isEqualTo(204);
    push("held", "p", 0, 11, PAD);
    long start = System.nanoTime();
    JsonNode popped = pop("/api/v1/pop/queue/held?batch=100&wait=true&timeout=60000");
    long tookMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
    assertThat(popped.get("messages").size()).isBetween(9, 11);
    assertThat(tookMs).as("held for the 30 s minimum pop wait").isLessThan(15_000);
  }

  private Wire wire() {
    return new Wire(broker());
  }

  private void push(String queue, String partition, int from, int count, int pad) {
    List<ObjectNode> items = new ArrayList<>();
    for (int n = from; n < from + count; n++) {
      items.add(
          Wire.item(
              queue,
              partition,
              queue + "-" + partition + "-" + n,
              Wire.object().put("n", n).put("pad", "x".repeat(pad))));
    }
    TestBroker.Reply r = broker().post("/api/v1/push", Wire.items(items));
    assertThat(r.status()).as(r.text()).isEqualTo(201);
  }

  private JsonNode pop(String path) {
    TestBroker.Reply r = broker().get(path);
    assertThat(r.status()).as(r.text()).isEqualTo(200);
    return r.json();
  }

  private static int payloadBytes(JsonNode answer) {
    int bytes = 0;
    for (JsonNode m : answer.get("messages")) {
      bytes += m.get("data").toString().length();
    }
    return bytes;
  }

  private static List<Integer> range(int n) {
    List<Integer> all = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      all.add(i);
    }
    return all;
  }
}
