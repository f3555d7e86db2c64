package queen.server.streams;

import static org.assertj.core.api.Assertions.assertThat;
import static queen.server.Wire.item;
import static queen.server.Wire.object;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import queen.server.TestBroker;

/**
 * The calls the streams tests make: register a query, build a cycle, pop, read state and cursors.
 */
final class Streams {
  private final TestBroker broker;

  Streams(TestBroker broker) {
    this.broker = broker;
  }

  static ObjectNode query(String name, String source, String hash) {
    return object()
        .put("name", name)
        .put("source_queue", source)
        .put("sink_queue", source + "-out")
        .put("config_hash", hash);
  }

  String register(String name, String source) {
    JsonNode r = broker.post("/streams/v1/queries", query(name, source, "h1")).json();
    return r.get("query_id").asText();
  }

  /** A cycle body: one upsert of key to value, one push to the sink, the ack of the message. */
  static ObjectNode cycle(String queryId, JsonNode message, String sink, String key, int value) {
    ObjectNode body =
        object()
            .put("query_id", queryId)
            .put("partition_id", message.get("partitionId").asText())
            .put("consumer_group", message.get("consumerGroup").asText());
    body.putArray("state_ops")
        .addObject()
        .put("type", "upsert")
        .put("key", key)
        .putObject("value")
        .put("count", value);
    body.putArray("push_items")
        .add(
            item(
                sink,
                "Default",
                "out-" + message.get("transactionId").asText(),
                object().put("count", value)));
    body.putObject("ack")
        .put("transactionId", message.get("transactionId").asText())
        .put("leaseId", message.get("leaseId").asText())
        .put("status", "completed");
    return body;
  }

  JsonNode state(String queryId, String partitionId) {
    ObjectNode body = object().put("query_id", queryId).put("partition_id", partitionId);
    return broker.post("/streams/v1/state/get", body).json().get("rows");
  }

  JsonNode pop(String queue, int batch) {
    TestBroker.Reply r =
        broker.get("/api/v1/pop/queue/" + queue + "?consumerGroup=g1&batch=" + batch);
    assertThat(r.status()).as(r.text()).isEqualTo(200);
    return r.json();
  }

  /** Group g1's cursor on the message's partition. */
  long committed(JsonNode message) {
    return broker.sqlLong(
        "select committed from queen.log_consumers where consumer_group = 'g1'"
            + " and partition_id = '"
            + message.get("partitionId").asText()
            + "'");
  }

  long sinkCount(String queue) {
    return broker.sqlLong(
        "select coalesce(sum(p.last_offset + 1), 0) from queen.log_partitions p"
            + " join queen.queues q on q.id = p.queue_id where q.name = '"
            + queue
            + "'");
  }
}
