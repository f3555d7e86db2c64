package queen.server.streams;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;
import static queen.server.Wire.object;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import queen.server.TestBroker;
import queen.server.Wire;

/**
 * What Queen's stream runners (JS, Python, Go) rely on beyond one cycle: how they read state, the
 * order they put a batch in, and the counts a cycle leaves in the queue's statistics.
 */
class StreamsRunnersTest {
  @RegisterExtension static final TestBroker broker = new TestBroker();
  private final Wire wire = new Wire(broker);
  private final Streams streams = new Streams(broker);

  // a cycle acks its batch with one positional ack: counted as one, the queue's charts showed a
  // fraction of what the stream consumed
  @Test
  void aCycleCountsEveryMessageItsAckConsumed() {
    String id = streams.register("q-counted", "counted-src");
    wire.pushNumbered("counted-src", "p0", 0, 4);
    JsonNode last = streams.pop("counted-src", 4).get("messages").get(3);
    assertThat(
            broker
                .post("/streams/v1/cycle", Streams.cycle(id, last, "counted-out", "n", 4))
                .json()
                .get("success")
                .asBoolean())
        .isTrue();
    await()
        .atMost(Duration.ofSeconds(20))
        .until(
            () ->
                broker.sqlLong(
                        "select coalesce(sum(m.acked), 0) from queen.queue_stats_minutes m"
                            + " join queen.queues q on q.id = m.queue_id"
                            + " where q.name = 'counted-src'")
                    == 4);
  }

  // Queen's runners read every key with keys [] at each cycle, and ripe windows by prefix and
  // windowEnd in their idle flush: answered nothing, they restarted every window at each cycle
  @Test
  void stateIsReadAsQueensRunnersAskForIt() {
    String id = streams.register("q-state-get", "state-get-src");
    wire.pushNumbered("state-get-src", "p0", 0, 1);
    JsonNode m = streams.pop("state-get-src", 1).get("messages").get(0);
    ObjectNode body = Streams.cycle(id, m, "state-get-out", "other", 1);
    ArrayNode ops = (ArrayNode) body.get("state_ops");
    String window = "tumb:60\u001f";
    ops.addObject()
        .put("type", "upsert")
        .put("key", window + "a")
        .putObject("value")
        .put("windowEnd", 1_000);
    ops.addObject()
        .put("type", "upsert")
        .put("key", window + "b")
        .putObject("value")
        .put("windowEnd", 3_000);
    assertThat(broker.post("/streams/v1/cycle", body).json().get("success").asBoolean()).isTrue();
    String pid = m.get("partitionId").asText();

    ObjectNode all = get(id, pid);
    all.putArray("keys");
    assertThat(keys(all))
        .as("no keys: every key")
        .containsExactly("other", window + "a", window + "b");
    assertThat(keys(get(id, pid).put("key_prefix", window)))
        .containsExactly(window + "a", window + "b");
    assertThat(keys(get(id, pid).put("key_prefix", window).put("ripe_at_or_before", 2_000)))
        .containsExactly(window + "a");
    assertThat(keys(get(id, pid).put("ripe_at_or_before", 1_000.5))).containsExactly(window + "a");
    ObjectNode asked = get(id, pid);
    asked.putArray("keys").add("other").add("missing");
    assertThat(keys(asked)).containsExactly("other");
    assertThat(
            broker
                .post("/streams/v1/state/get", get(id, pid).put("ripe_at_or_before", "soon"))
                .status())
        .isEqualTo(400);
  }

  private static ObjectNode get(String queryId, String partitionId) {
    return object().put("query_id", queryId).put("partition_id", partitionId);
  }

  private static List<String> keys(ObjectNode stateGet) {
    TestBroker.Reply r = broker.post("/streams/v1/state/get", stateGet);
    assertThat(r.status()).as(r.text()).isEqualTo(200);
    List<String> keys = new ArrayList<>();
    r.json().get("rows").forEach(row -> keys.add(row.get("key").asText()));
    return keys;
  }

  // the runners order a batch by (createdAt, id) and ack its last message: the messages of one
  // push share their createdAt, and in hash order a message in the middle was acked
  @Test
  void aBatchInTheRunnersOrderIsInOffsetOrder() {
    wire.pushNumbered("id-order", "p0", 0, 50);
    JsonNode popped = streams.pop("id-order", 50);
    List<JsonNode> messages = new ArrayList<>();
    popped.get("messages").forEach(messages::add);
    assertThat(messages).hasSize(50);
    messages.sort(
        Comparator.<JsonNode, Instant>comparing(n -> Instant.parse(n.get("createdAt").asText()))
            .thenComparing(n -> n.get("id").asText()));
    assertThat(messages.stream().map(n -> n.get("data").get("n").asInt()).toList())
        .isEqualTo(IntStream.range(0, 50).boxed().toList());
  }
}
