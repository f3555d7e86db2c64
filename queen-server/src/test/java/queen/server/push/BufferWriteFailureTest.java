package queen.server.push;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import queen.server.ChildBroker;
import queen.server.TestBroker;
import queen.server.Wire;

/**
 * A buffer whose writes fail in the operating system: the broker runs with a file size limit
 * (RLIMIT_FSIZE), so a buffer file that reaches it gets a real write error part-way through a
 * record, as on a full disk. Such a push is a 503 and never {@code buffered}; the torn record is
 * never drained, and every push answered {@code buffered} is stored exactly once.
 */
class BufferWriteFailureTest {
  @RegisterExtension static final TestBroker broker = new TestBroker();

  private static final int LIMIT_BYTES = 1 << 20;

  private final HttpClient http = HttpClient.newHttpClient();

  private HttpResponse<String> post(String url, String path, JsonNode body) throws Exception {
    return http.send(
        HttpRequest.newBuilder(URI.create(url + path))
            .header("Content-Type", "application/json")
            .POST(HttpRequest.BodyPublishers.ofString(body.toString()))
            .build(),
        HttpResponse.BodyHandlers.ofString());
  }

  @Test
  void aWriteTheSystemRefusesIsA503AndEveryBufferedPushIsStoredOnce() throws Exception {
    assumeTrue(
        Files.isExecutable(Path.of("/usr/bin/prlimit")),
        "needs prlimit (util-linux) to limit the broker's file size");
    ChildBroker.Started child =
        ChildBroker.start(
            broker.db(),
            List.of("/usr/bin/prlimit", "--fsize=" + LIMIT_BYTES),
            Map.of(
                "FILE_BUFFER_DIR",
                Files.createTempDirectory("queen-buffer-fsize").toString(),
                "QUEEN_STATE_REFRESH_MS",
                "100"));
    try {
      assertThat(
              post(child.url(), "/api/v1/system/maintenance", Wire.object().put("enabled", true))
                  .statusCode())
          .isEqualTo(200);
      String filler = "x".repeat(8_000);
      List<String> buffered = new ArrayList<>();
      List<String> refused = new ArrayList<>();
      for (int i = 0; i < 400; i++) {
        String txn = "w-" + i;
        ObjectNode item =
            Wire.item("fsize", "p", txn, Wire.object().put("n", i).put("fill", filler));
        HttpResponse<String> r = post(child.url(), "/api/v1/push", Wire.items(List.of(item)));
        if (r.statusCode() == 201) {
          assertThat(TestBroker.JSON.readTree(r.body()).get(0).get("status").asText())
              .isEqualTo("buffered");
          buffered.add(txn);
        } else {
          assertThat(r.statusCode()).as(r.body()).isEqualTo(503);
          assertThat(TestBroker.JSON.readTree(r.body()).get("error").asText()).contains("buffer");
          refused.add(txn);
        }
      }
      // 400 records of 8 kB against files limited to 1 MiB: every file ends in a refused write
      assertThat(refused).hasSizeGreaterThanOrEqualTo(2);
      assertThat(buffered).hasSizeGreaterThan(300);

      post(child.url(), "/api/v1/system/maintenance", Wire.object().put("enabled", false));
      await()
          .atMost(Duration.ofSeconds(60))
          .until(
              () ->
                  TestBroker.JSON
                          .readTree(
                              http.send(
                                      HttpRequest.newBuilder(
                                              URI.create(child.url() + "/api/v1/status/buffers"))
                                          .build(),
                                      HttpResponse.BodyHandlers.ofString())
                                  .body())
                          .get("pending")
                          .asLong()
                      == 0);
      Map<String, Integer> stored = new HashMap<>();
      while (true) {
        TestBroker.Reply r =
            broker.get("/api/v1/pop/queue/fsize?consumerGroup=check&batch=100&autoAck=true");
        if (r.status() == 204) {
          break;
        }
        for (JsonNode m : r.json().get("messages")) {
          stored.merge(m.get("transactionId").asText(), 1, Integer::sum);
        }
      }
      assertThat(stored.keySet()).containsExactlyInAnyOrderElementsOf(buffered);
      assertThat(stored.values()).allMatch(n -> n == 1);
    } finally {
      child.process().destroyForcibly().waitFor();
    }
  }
}
