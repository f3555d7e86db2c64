package queen.server.push;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import queen.server.Broker;
import queen.server.TestBroker;
import queen.server.Wire;

/**
 * Push maintenance: pushes are written to the broker's local buffer and answered {@code buffered};
 * switched off, the buffer drains into PostgreSQL in order per partition, exactly once, also after
 * a crash with the buffer on disk or halfway through a drain.
 */
class PushMaintenanceTest {
  static final int PARTITIONS = 10;

  @RegisterExtension static final TestBroker broker = new TestBroker();

  private static TestBroker.Reply maintenance(Broker via, boolean on) {
    ObjectNode body = Wire.object().put("enabled", on);
    return via == null
        ? broker.post("/api/v1/system/maintenance", body)
        : broker.post(via, "/api/v1/system/maintenance", body);
  }

  /** 100 pushes of 10 items each, item n of partition p carrying {"p": p, "n": n}. */
  private static void pushThousand(Broker via, String queue) {
    int[] next = new int[PARTITIONS];
    for (int r = 0; r < 100; r++) {
      List<ObjectNode> items = new ArrayList<>();
      for (int i = 0; i < 10; i++) {
        int p = (r * 3 + i) % PARTITIONS;
        int n = next[p]++;
        items.add(
            Wire.item(
                queue, "p" + p, queue + "-" + p + "-" + n, Wire.object().put("p", p).put("n", n)));
      }
      TestBroker.Reply reply =
          via == null
              ? broker.post("/api/v1/push", Wire.items(items))
              : broker.post(via, "/api/v1/push", Wire.items(items));
      assertThat(reply.status()).isEqualTo(201);
      for (JsonNode res : reply.json()) {
        assertThat(res.get("status").asText()).isEqualTo("buffered");
      }
    }
  }

  /** A broker of its own buffers {@link #pushThousand} in {@code dir} and stops: the files left. */
  private static List<Path> bufferThousand(Map<String, String> env, Path dir, String queue)
      throws Exception {
    try (Broker first = broker.startAnother(env)) {
      maintenance(first, true);
      pushThousand(first, queue);
    }
    try (Stream<Path> s = Files.list(dir)) {
      return s.filter(p -> p.toString().endsWith(".log")).toList();
    }
  }

  /**
   * Renames each of {@code files}, a buffer file by its {@code .log} name, from suffix {@code from}
   * to {@code to}.
   */
  private static void rename(List<Path> files, String from, String to) throws Exception {
    for (Path f : files) {
      String name = f.getFileName().toString();
      String stem = name.substring(0, name.length() - ".log".length());
      Files.move(f.resolveSibling(stem + from), f.resolveSibling(stem + to));
    }
  }

  /** Reads the queue to the end with a fresh group; every message once, in order per partition. */
  private static void assertEveryMessageOnceInOrder(String queue, int expected) {
    assertEveryMessageOnceInOrder(queue, expected, PARTITIONS);
  }

  private static void assertEveryMessageOnceInOrder(String queue, int expected, int partitions) {
    Map<Integer, List<Integer>> seen = new HashMap<>();
    int total = 0;
    while (true) {
      TestBroker.Reply r =
          broker.get("/api/v1/pop/queue/" + queue + "?consumerGroup=check&batch=500&autoAck=true");
      if (r.status() == 204) {
        break;
      }
      for (JsonNode m : r.json().get("messages")) {
        seen.computeIfAbsent(m.at("/data/p").asInt(), k -> new ArrayList<>())
            .add(m.at("/data/n").asInt());
        total++;
      }
    }
    assertThat(total).isEqualTo(expected);
    for (var e : seen.entrySet()) {
      List<Integer> ns = e.getValue();
      for (int i = 0; i < ns.size(); i++) {
        assertThat(ns.get(i)).as("partition p%d in order, each once", e.getKey()).isEqualTo(i);
      }
    }
    assertThat(seen).hasSize(partitions);
  }

  private static long segments(String queue) {
    return broker.sqlLong(
        "select count(*) from queen.log_segments s join queen.log_partitions p on p.id ="
            + " s.partition_id join queen.queues q on q.id = p.queue_id where q.name = '"
            + queue
            + "'");
  }

  @Test
  void bufferedWhileOnAndDrainedExactlyOnceInOrderWhenOff() {
    assertThat(maintenance(null, true).json().get("maintenanceMode").asBoolean()).isTrue();
    pushThousand(null, "mnt");
    assertThat(segments("mnt")).as("nothing written to PostgreSQL").isZero();
    assertThat(broker.get("/api/v1/status/buffers").json().get("pending").asLong()).isEqualTo(1000);
    assertThat(broker.metric("queen_buffer_pending_messages", "")).isEqualTo(1000);
    JsonNode state = broker.get("/api/v1/system/maintenance").json();
    assertThat(state.get("bufferedMessages").asLong()).isEqualTo(1000);
    assertThat(broker.get("/api/v1/pop/queue/mnt?batch=10").status()).isEqualTo(204);

    maintenance(null, false);
    await()
        .atMost(Duration.ofSeconds(30))
        .until(() -> broker.get("/api/v1/status/buffers").json().get("pending").asLong() == 0);
    assertEveryMessageOnceInOrder("mnt", 1000);
    assertThat(broker.metric("queen_buffer_drained_messages_total", ""))
        .isGreaterThanOrEqualTo(1000);
  }

  @Test
  void aDrainCutsBigBufferedPushesIntoPushesOfBoundedSize() {
    // 12 pushes of a 1 MiB message each: merged by count alone, one push and one segment of 12 MiB
    maintenance(null, true);
    String big = "x".repeat(1 << 20);
    for (int n = 0; n < 12; n++) {
      ObjectNode item =
          Wire.item(
              "mnt-big", "p0", "mnt-big-" + n, Wire.object().put("p", 0).put("n", n).put("s", big));
      assertThat(broker.post("/api/v1/push", Wire.items(List.of(item))).status()).isEqualTo(201);
    }
    maintenance(null, false);
    await()
        .atMost(Duration.ofSeconds(30))
        .until(() -> broker.get("/api/v1/status/buffers").json().get("pending").asLong() == 0);
    assertThat(segments("mnt-big"))
        .as("drain pushes of at most %d MiB", BufferDrain.DRAIN_BYTES >> 20)
        .isGreaterThanOrEqualTo(2);
    assertEveryMessageOnceInOrder("mnt-big", 12, 1);
  }

  @Test
  void aPushAfterTheSwitchAnsweredIsBufferedWhateverARefreshInFlightHadRead() {
    // a refresh that read the switch before it was set, applied after the route set it, turned
    // it off again for an interval: a push then went straight to the database, past the buffer
    try (Broker refreshing = broker.startAnother(Map.of("QUEEN_STATE_REFRESH_MS", "10"))) {
      for (int i = 0; i < 300; i++) {
        maintenance(refreshing, true);
        ObjectNode item = Wire.item("switch", "p", "switch-" + i, Wire.object().put("n", i));
        TestBroker.Reply reply = broker.post(refreshing, "/api/v1/push", Wire.items(List.of(item)));
        assertThat(reply.json().get(0).get("status").asText())
            .as("push %d", i)
            .isEqualTo("buffered");
        maintenance(refreshing, false);
      }
      await()
          .atMost(Duration.ofSeconds(30))
          .until(
              () ->
                  broker.get(refreshing, "/api/v1/status/buffers").json().get("pending").asLong()
                      == 0);
    }
    assertThat(
            broker.sqlLong(
                "select p.last_offset from queen.log_partitions p"
                    + " join queen.queues q on q.id = p.queue_id where q.name = 'switch'"))
        .as("every push stored")
        .isEqualTo(299);
  }

  @Test
  void aTransactionThatPushesIsAppliedWhileOnAsWireAnswersIt200() {
    maintenance(null, true);
    ObjectNode first = Wire.item("mnt-tx", "p0", "first", Wire.object().put("p", 0).put("n", 0));
    assertThat(broker.post("/api/v1/push", Wire.items(List.of(first))).status()).isEqualTo(201);
    String txn =
        "{\"operations\":[{\"type\":\"push\",\"items\":[{\"queue\":\"mnt-tx\","
            + "\"partition\":\"p0\",\"transactionId\":\"second\","
            + "\"payload\":{\"p\":0,\"n\":1}}]}]}";
    // its pushes commit with its acks, so they cannot be buffered: they go straight in (and may
    // land before buffered ones), a consume pipeline's transactions keep working in maintenance
    TestBroker.Reply applied = broker.post("/api/v1/transaction", txn);
    assertThat(applied.status()).isEqualTo(200);
    assertThat(applied.json().get("success").asBoolean()).isTrue();
    assertThat(segments("mnt-tx")).as("the transaction's push only").isEqualTo(1);
    maintenance(null, false);
    await()
        .atMost(Duration.ofSeconds(30))
        .until(() -> broker.get("/api/v1/status/buffers").json().get("pending").asLong() == 0);
    assertThat(segments("mnt-tx")).isEqualTo(2);
  }

  @Test
  void pushesAfterTheSwitchOffQueueBehindTheDrainAndKeepTheOrderOfTheirPartition() {
    maintenance(null, true);
    int buffered = 10_000;
    for (int from = 0; from < buffered; from += 500) {
      List<ObjectNode> items = new ArrayList<>();
      for (int n = from; n < from + 500; n++) {
        items.add(Wire.item("behind", "p0", "b-" + n, Wire.object().put("p", 0).put("n", n)));
      }
      assertThat(broker.post("/api/v1/push", Wire.items(items)).status()).isEqualTo(201);
    }
    maintenance(null, false);
    // one producer goes on at once, while the drain runs: a push straight to PostgreSQL would
    // land before the buffered messages of its partition
    for (int n = buffered; n < buffered + 200; n++) {
      ObjectNode item = Wire.item("behind", "p0", "b-" + n, Wire.object().put("p", 0).put("n", n));
      assertThat(broker.post("/api/v1/push", Wire.items(List.of(item))).status()).isEqualTo(201);
    }
    await()
        .atMost(Duration.ofSeconds(60))
        .until(() -> broker.get("/api/v1/status/buffers").json().get("pending").asLong() == 0);
    assertEveryMessageOnceInOrder("behind", buffered + 200, 1);
    // the buffer empty, pushes go straight to PostgreSQL again
    ObjectNode after = Wire.item("behind", "p0", "b-after", Wire.object().put("p", 0));
    assertThat(
            broker
                .post("/api/v1/push", Wire.items(List.of(after)))
                .json()
                .get(0)
                .get("status")
                .asText())
        .isEqualTo("queued");
  }

  @Test
  void aBrokerThatStopsWithABufferOrHalfwayThroughADrainLosesAndRepeatsNothing() throws Exception {
    Path dir = Files.createTempDirectory("queen-buffer-crash");
    Map<String, String> env = Map.of("FILE_BUFFER_DIR", dir.toString());
    List<Path> files = bufferThousand(env, dir, "crash");
    assertThat(files).isNotEmpty();
    // keep a copy as a drain that stored everything and crashed before deleting its files leaves it
    Path copies = Files.createTempDirectory("queen-buffer-copy");
    for (Path f : files) {
      Files.copy(f, copies.resolve(f.getFileName()));
    }
    try (Broker second = broker.startAnother(env)) {
      assertThat(broker.get(second, "/api/v1/status/buffers").json().get("pending").asLong())
          .as("found on disk after the restart")
          .isEqualTo(1000);
      maintenance(second, false);
      await()
          .atMost(Duration.ofSeconds(30))
          .until(
              () ->
                  broker.get(second, "/api/v1/status/buffers").json().get("pending").asLong() == 0);
    }
    for (Path f : files) {
      Files.copy(copies.resolve(f.getFileName()), f);
    }
    try (Broker third = broker.startAnother(env)) {
      await()
          .atMost(Duration.ofSeconds(30))
          .until(
              () ->
                  broker.get(third, "/api/v1/status/buffers").json().get("pending").asLong() == 0);
    }
    assertEveryMessageOnceInOrder("crash", 1000);
  }

  @Test
  void aFileSetAsideAndRenamedBackWhileTheBrokerRunsIsDrainedWithoutAnotherPush() throws Exception {
    // what operations.md tells an operator to do with a .failed file once its cause is fixed
    Path dir = Files.createTempDirectory("queen-buffer-back");
    Map<String, String> env = Map.of("FILE_BUFFER_DIR", dir.toString());
    List<Path> files = bufferThousand(env, dir, "back");
    rename(files, ".log", ".log.failed"); // as a drain sets them aside
    try (Broker second = broker.startAnother(env)) {
      maintenance(second, false);
      assertThat(broker.get(second, "/api/v1/status/buffers").json().get("pending").asLong())
          .isZero();
      rename(files, ".log.failed", ".log");
      await().atMost(Duration.ofSeconds(30)).until(() -> files.stream().noneMatch(Files::exists));
    }
    assertEveryMessageOnceInOrder("back", 1000);
  }

  @Test
  void aFileDamagedInTheMiddleIsSetAsideNotDeletedWithTheRecordsAfterTheDamage() throws Exception {
    Path dir = Files.createTempDirectory("queen-buffer-damaged");
    Map<String, String> env = Map.of("FILE_BUFFER_DIR", dir.toString());
    List<Path> files = bufferThousand(env, dir, "damaged");
    Path file = files.getFirst();
    byte[] bytes = Files.readAllBytes(file);
    bytes[bytes.length / 2] ^=
        0x40; // a flipped bit in a record in the middle, answered records after it
    Files.write(file, bytes);
    try (Broker second = broker.startAnother(env)) {
      maintenance(second, false);
      Path aside = file.resolveSibling(file.getFileName() + ".failed");
      await().atMost(Duration.ofSeconds(30)).until(() -> Files.exists(aside));
      assertThat(file).doesNotExist();
      assertThat(Files.size(aside)).as("kept whole for the operator").isEqualTo(bytes.length);
    }
    assertThat(segments("damaged")).as("the records before the damage stored").isPositive();
  }

  @Test
  void aFileRenamedBackWhileOthersWaitIsCountedWithThemAndLaterPushesStillDrain() throws Exception {
    // drained uncounted, its messages came off the others' count, and pushes buffered later
    // looked like nothing pending: they stayed in the buffer
    Path dir = Files.createTempDirectory("queen-buffer-busy");
    Map<String, String> env = Map.of("FILE_BUFFER_DIR", dir.toString());
    List<Path> files = bufferThousand(env, dir, "busy-old");
    rename(files, ".log", ".log.failed"); // as a drain sets them aside
    try (Broker second = broker.startAnother(env)) {
      maintenance(second, true);
      pushThousand(second, "busy-new");
      rename(files, ".log.failed", ".log");
      maintenance(second, false);
      await().atMost(Duration.ofSeconds(30)).until(() -> pending(second) == 0);
      maintenance(second, true);
      pushThousand(second, "busy-later");
      maintenance(second, false);
      await().atMost(Duration.ofSeconds(30)).until(() -> pending(second) == 0);
    }
    assertEveryMessageOnceInOrder("busy-old", 1000);
    assertEveryMessageOnceInOrder("busy-new", 1000);
    assertEveryMessageOnceInOrder("busy-later", 1000);
  }

  @Test
  void aBrokerStartedWhileAnotherStillHoldsTheBufferTakesItOverOnceFreed() throws Exception {
    Path dir = Files.createTempDirectory("queen-buffer-handover");
    Map<String, String> env = Map.of("FILE_BUFFER_DIR", dir.toString());
    Broker first = broker.startAnother(env);
    try {
      maintenance(first, true);
      pushThousand(first, "handover");
      try (Broker second = broker.startAnother(env)) {
        assertThat(bufferHealthy(second)).as("the directory has one owner").isFalse();
        first.close(); // the restart that overlapped the shutdown of the broker before
        await()
            .atMost(Duration.ofSeconds(30))
            .until(() -> bufferHealthy(second) && pending(second) == 1000);
        maintenance(second, false);
        await().atMost(Duration.ofSeconds(30)).until(() -> pending(second) == 0);
      }
    } finally {
      first.close();
    }
    assertEveryMessageOnceInOrder("handover", 1000);
  }

  private static boolean bufferHealthy(Broker b) {
    return broker.get(b, "/api/v1/status/buffers").json().get("bufferHealthy").asBoolean();
  }

  private static long pending(Broker b) {
    return broker.get(b, "/api/v1/status/buffers").json().get("pending").asLong();
  }

  @Test
  void aBufferThatCannotBeWrittenIsA503AndNeverBuffered() throws Exception {
    Path notADirectory = Files.createTempFile("queen-buffer", ".file");
    try (Broker unwritable =
            broker.startAnother(
                Map.of("FILE_BUFFER_DIR", notADirectory.resolve("sub").toString()));
        Broker tiny = broker.startAnother(Map.of("QUEEN_BUFFER_MAX_MB", "1"))) {
      maintenance(unwritable, true);
      TestBroker.Reply r =
          broker.post(
              unwritable,
              "/api/v1/push",
              Wire.items(List.of(Wire.item("nowhere", "p", "t", Wire.object()))));
      assertThat(r.status()).isEqualTo(503);
      assertThat(r.json().get("error").asText()).contains("FILE_BUFFER_DIR");
      assertThat(
              broker
                  .get(unwritable, "/api/v1/system/maintenance")
                  .json()
                  .get("bufferHealthy")
                  .asBoolean())
          .isFalse();

      maintenance(tiny, true);
      String big = "x".repeat(200_000);
      int buffered = 0;
      int refused = 0;
      for (int i = 0; i < 8; i++) {
        TestBroker.Reply p =
            broker.post(
                tiny,
                "/api/v1/push",
                Wire.items(List.of(Wire.item("full", "p", "t" + i, Wire.object().put("s", big)))));
        if (p.status() == 201) {
          buffered++;
        } else {
          assertThat(p.status()).isEqualTo(503);
          assertThat(p.json().get("error").asText()).contains("QUEEN_BUFFER_MAX_MB");
          refused++;
        }
      }
      assertThat(buffered).isEqualTo(5);
      assertThat(refused).isEqualTo(3);
      assertThat(broker.get(tiny, "/api/v1/status/buffers").json().get("pending").asLong())
          .isEqualTo(5);
      assertThat(broker.get(tiny, "/api/v1/status/buffers").json().get("failed").asLong())
          .isEqualTo(3);
      maintenance(tiny, false);
      await()
          .atMost(Duration.ofSeconds(30))
          .until(
              () -> broker.get(tiny, "/api/v1/status/buffers").json().get("pending").asLong() == 0);
    }
    assertThat(segments("nowhere")).isZero();
    assertThat(broker.sqlLong("select count(*) from queen.queues where name = 'full'"))
        .isEqualTo(1);
  }
}
