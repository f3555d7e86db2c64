package queen.server.push;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import queen.server.Broker;
import queen.server.TestBroker;
import queen.server.Wire;

/**
 * A drained buffer file that cannot be deleted (made immutable here, as a directory made read-only
 * or a file system remounted so would leave it) is deleted once it can be, without being pushed
 * again meanwhile, and the files after it drain.
 */
class BufferRetireTest {
  @RegisterExtension static final TestBroker broker = new TestBroker();

  private static int next;

  private static void pushHundred(Broker via) {
    List<ObjectNode> items = new ArrayList<>();
    for (int i = 0; i < 100; i++, next++) {
      items.add(Wire.item("retire", "p", "r-" + next, Wire.object().put("n", next)));
    }
    TestBroker.Reply reply = broker.post(via, "/api/v1/push", Wire.items(items));
    assertThat(reply.json().get(0).get("status").asText()).isEqualTo("buffered");
  }

  private static void maintenance(Broker via, boolean on) {
    broker.post(via, "/api/v1/system/maintenance", Wire.object().put("enabled", on));
  }

  private static JsonNode buffers(Broker via) {
    return broker.get(via, "/api/v1/status/buffers").json();
  }

  private static List<Path> logs(Path dir) throws Exception {
    try (Stream<Path> s = Files.list(dir)) {
      return s.filter(p -> p.toString().endsWith(".log")).sorted().toList();
    }
  }

  private static boolean immutable(Path file, boolean on) throws Exception {
    Process p =
        new ProcessBuilder("chattr", on ? "+i" : "-i", file.toString())
            .redirectErrorStream(true)
            .start();
    p.getInputStream().readAllBytes();
    return p.waitFor() == 0;
  }

  @Test
  void aDrainedFileThatCannotBeDeletedIsNotPushedAgainAndTheFilesAfterItDrain() throws Exception {
    Path dir = Files.createTempDirectory("queen-buffer-retire");
    Map<String, String> env = Map.of("FILE_BUFFER_DIR", dir.toString());
    try (Broker first = broker.startAnother(env)) {
      maintenance(first, true);
      pushHundred(first);
    }
    List<Path> firstFiles = logs(dir);
    assertThat(firstFiles).hasSize(1);
    Path stuck = firstFiles.get(0);
    Assumptions.assumeTrue(immutable(stuck, true), "chattr +i needs root on ext2/3/4 or xfs");
    try (Broker second = broker.startAnother(env)) {
      pushHundred(second);
      maintenance(second, false);
      // the second file drains while the first, stored, waits to be deleted
      await()
          .atMost(Duration.ofSeconds(30))
          .until(() -> buffers(second).get("pending").asLong() == 0 && logs(dir).size() == 1);
      assertThat(logs(dir)).containsExactly(stuck);
      // and the first is not pushed again at every pass: before, each pass drained all of it
      // again (stored twice once retention had removed the first copies), and held the second
      await()
          .during(Duration.ofSeconds(2))
          .atMost(Duration.ofSeconds(5))
          .until(() -> buffers(second).get("drained").asLong() == 200);
      assertThat(immutable(stuck, false)).isTrue();
      await().atMost(Duration.ofSeconds(30)).until(() -> logs(dir).isEmpty());
      assertThat(buffers(second).get("drained").asLong()).isEqualTo(200);
    } finally {
      immutable(stuck, false);
    }
    List<Integer> seen = new ArrayList<>();
    while (true) {
      TestBroker.Reply r = broker.get("/api/v1/pop/queue/retire?batch=1000&autoAck=true");
      if (r.status() == 204) {
        break;
      }
      r.json().get("messages").forEach(m -> seen.add(m.at("/data/n").asInt()));
    }
    assertThat(seen).hasSize(200);
    for (int i = 0; i < seen.size(); i++) {
      assertThat(seen.get(i)).as("in order, each once").isEqualTo(i);
    }
  }
}
