package queen.server.push;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import queen.server.Broker;
import queen.server.TestBroker;
import queen.server.Wire;

/**
 * A broker restarted while the one before still holds FILE_BUFFER_DIR (its shutdown not over) and
 * left buffered pushes there: a push to that partition waits (503) until the directory opens and
 * drains, so it never overtakes messages already answered {@code buffered}.
 */
class BufferOverlapTest {
  @RegisterExtension static final TestBroker broker = new TestBroker();

  @Test
  void aPushWaitsForTheBufferedOnesOfARunStillHoldingTheDirectory() throws Exception {
    Path dir = Files.createTempDirectory("queen-buffer-overlap");
    new Wire(broker).configure("overlap", Wire.object());
    LocalBuffer before = LocalBuffer.open(dir, 1 << 20); // the run shutting down
    before.append(
        BufferRecord.encode(
            List.of(
                new PushItem(
                    "overlap",
                    "p",
                    "{\"n\":0}".getBytes(StandardCharsets.UTF_8),
                    "first",
                    UUID.randomUUID(),
                    null)),
            new PayloadSealing(null, id -> {})),
        1);
    Broker restarted = broker.startAnother(Map.of("FILE_BUFFER_DIR", dir.toString()));
    try {
      String second =
          Wire.items(List.of(Wire.item("overlap", "p", "second", Wire.object().put("n", 1))))
              .toString();
      TestBroker.Reply refused =
          broker.post(restarted, "/api/v1/push", TestBroker.JSON.readTree(second));
      assertThat(refused.status()).as("it would overtake 'first'").isEqualTo(503);
      assertThat(refused.headers().firstValue("Retry-After")).isPresent();

      before.close(); // the old run's shutdown ends
      await()
          .atMost(Duration.ofSeconds(20))
          .until(
              () ->
                  broker.post(restarted, "/api/v1/push", TestBroker.JSON.readTree(second)).status()
                      == 201);
      // the second push may have queued behind the buffered one: both stored by the drain
      await()
          .atMost(Duration.ofSeconds(20))
          .until(
              () ->
                  broker.sqlLong(
                          "select coalesce(sum(s.msg_count), 0) from queen.log_segments s"
                              + " join queen.log_partitions p on p.id = s.partition_id"
                              + " join queen.queues q on q.id = p.queue_id where q.name = 'overlap'")
                      == 2);
      TestBroker.Reply popped =
          broker.get(
              restarted, "/api/v1/pop/queue/overlap/partition/p?batch=10&wait=true&timeout=5000");
      assertThat(Wire.numbers(popped.json())).containsExactly(0, 1);
    } finally {
      restarted.close();
    }
  }
}
