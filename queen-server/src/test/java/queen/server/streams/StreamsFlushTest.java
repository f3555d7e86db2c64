package queen.server.streams;

import static org.assertj.core.api.Assertions.assertThat;
import static queen.server.Wire.item;
import static queen.server.Wire.object;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import queen.server.TestBroker;
import queen.server.Wire;

/**
 * A cycle without an ack, the runners' idle flush of ripe windows, is fenced by its group's lease:
 * a worker that read the state before the flush deleted a window would write it back with its own
 * cycle, and the window would be flushed twice.
 */
class StreamsFlushTest {
  @RegisterExtension static final TestBroker broker = new TestBroker();

  private final Wire wire = new Wire(broker);
  private final Streams streams = new Streams(broker);

  private static ObjectNode flush(String queryId, String partitionId) {
    ObjectNode body =
        object()
            .put("query_id", queryId)
            .put("partition_id", partitionId)
            .put("consumer_group", "g1");
    body.putArray("state_ops").addObject().put("type", "delete").put("key", "window");
    body.putArray("push_items")
        .add(item("flush-out", "Default", "flushed-window", object().put("closed", true)));
    return body;
  }

  @Test
  void aFlushWhileAWorkerHoldsTheLeaseIsRefusedAndAppliedOnceAfterItsCycle() {
    String id = streams.register("q-flush", "flush-src");
    wire.pushNumbered("flush-src", "p0", 0, 1);
    JsonNode first = streams.pop("flush-src", 1).get("messages").get(0);
    String partition = first.get("partitionId").asText();
    assertThat(cycle(Streams.cycle(id, first, "flush-out", "window", 1))).isTrue();

    wire.pushNumbered("flush-src", "p0", 1, 1);
    JsonNode second = streams.pop("flush-src", 1).get("messages").get(0);
    JsonNode refused = broker.post("/streams/v1/cycle", flush(id, partition)).json();
    assertThat(refused.get("success").asBoolean()).as(refused.toString()).isFalse();
    assertThat(refused.get("error").asText()).contains("leased by a worker of consumer group g1");
    assertThat(streams.state(id, partition).get(0).get("value").get("count").asInt())
        .as("the window is still there for the worker's cycle")
        .isEqualTo(1);
    assertThat(streams.sinkCount("flush-out")).isEqualTo(1);

    assertThat(cycle(Streams.cycle(id, second, "flush-out", "window", 2))).isTrue();
    assertThat(cycle(flush(id, partition))).as("no lease now").isTrue();
    assertThat(streams.state(id, partition)).isEmpty();
    assertThat(streams.sinkCount("flush-out"))
        .as("one output per message and the window flushed once")
        .isEqualTo(3);
  }

  private static boolean cycle(ObjectNode body) {
    JsonNode r = broker.post("/streams/v1/cycle", body).json();
    assertThat(r.get("success").asBoolean()).as(r.toString()).isTrue();
    return true;
  }
}
