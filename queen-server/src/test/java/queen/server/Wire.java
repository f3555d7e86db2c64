package queen.server;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.UUID;

/** Request bodies and calls of the wire contract, built the way Queen's clients build them. */
public final class Wire {
  private final TestBroker broker;

  public Wire(TestBroker broker) {
    this.broker = broker;
  }

  public static ObjectNode object() {
    return TestBroker.JSON.createObjectNode();
  }

  /** A push item with an explicit transaction id. */
  public static ObjectNode item(String queue, String partition, String txn, JsonNode payload) {
    ObjectNode i = object().put("queue", queue).put("partition", partition);
    if (txn != null) {
      i.put("transactionId", txn);
    }
    i.set("payload", payload);
    return i;
  }

  public static ObjectNode items(List<? extends JsonNode> items) {
    ObjectNode body = object();
    ArrayNode arr = body.putArray("items");
    items.forEach(arr::add);
    return body;
  }

  /** Pushes payloads {"n": from..from+count-1} to one partition; returns the push answer. */
  /**
   * One message of 3,600 random characters: its segment, compressed, stays about that big (bigger
   * than a test's byte budget).
   */
  public void pushRandom(String queue, String partition, String txn) {
    StringBuilder random = new StringBuilder();
    for (int i = 0; i < 100; i++) {
      random.append(UUID.randomUUID());
    }
    TestBroker.Reply r =
        broker.post(
            "/api/v1/push",
            items(List.of(item(queue, partition, txn, object().put("d", random.toString())))));
    if (r.status() != 201) {
      throw new AssertionError("push answered " + r.status() + ": " + r.text());
    }
  }

  public JsonNode pushNumbered(String queue, String partition, int from, int count) {
    List<ObjectNode> items = new ArrayList<>();
    for (int n = from; n < from + count; n++) {
      items.add(item(queue, partition, queue + "-" + partition + "-" + n, object().put("n", n)));
    }
    TestBroker.Reply r = broker.post("/api/v1/push", items(items));
    if (r.status() != 201) {
      throw new AssertionError("push answered " + r.status() + ": " + r.text());
    }
    return r.json();
  }

  /**
   * One push of 40 messages {"n": 0..39} to partition p, each padded with about 600 random
   * characters: a blob over 8 KiB compressed, of which the pops after the first get a stub.
   */
  public void pushBig(String queue) {
    java.util.Random random = new Random(42);
    List<ObjectNode> items = new ArrayList<>();
    for (int n = 0; n < 40; n++) {
      StringBuilder pad = new StringBuilder();
      for (int i = 0; i < 600; i++) {
        pad.append((char) ('!' + random.nextInt(90)));
      }
      items.add(item(queue, "p", queue + "-" + n, object().put("n", n).put("pad", pad.toString())));
    }
    TestBroker.Reply r = broker.post("/api/v1/push", items(items));
    if (r.status() != 201) {
      throw new AssertionError("push answered " + r.status() + ": " + r.text());
    }
  }

  /** GET on the single-partition pop route with a raw query string. */
  public TestBroker.Reply popPartition(String queue, String partition, String query) {
    return broker.get("/api/v1/pop/queue/" + queue + "/partition/" + partition + "?" + query);
  }

  /** Acks every message of a pop answer as completed with its lease, in one batch call. */
  public JsonNode ackAll(JsonNode popAnswer) {
    return ackAll(popAnswer, "completed", null);
  }

  /** Acks every message of a pop answer with one status (and error), in one batch call. */
  public JsonNode ackAll(JsonNode popAnswer, String status, String error) {
    return broker.post("/api/v1/ack/batch", acks(popAnswer, status, error)).json();
  }

  /** The body of one batch ack of every message of a pop answer, with one status (and error). */
  public static ObjectNode acks(JsonNode popAnswer, String status, String error) {
    ObjectNode body = object();
    ArrayNode acks = body.putArray("acknowledgments");
    for (JsonNode m : popAnswer.get("messages")) {
      acks.add(ack(m, status, error));
    }
    body.put("consumerGroup", popAnswer.get("consumerGroup").asText());
    return body;
  }

  /** One acknowledgement of a popped message, with its lease. */
  public static ObjectNode ack(JsonNode message, String status, String error) {
    ObjectNode a =
        object()
            .put("transactionId", message.get("transactionId").asText())
            .put("partitionId", message.get("partitionId").asText())
            .put("leaseId", message.get("leaseId").asText())
            .put("status", status);
    if (error != null) {
      a.put("error", error);
    }
    return a;
  }

  /** The "n" field of every message of a pop answer, in order. */
  public static List<Integer> numbers(JsonNode popAnswer) {
    List<Integer> ns = new ArrayList<>();
    for (JsonNode m : popAnswer.get("messages")) {
      ns.add(m.get("data").get("n").asInt());
    }
    return ns;
  }

  public void configure(String queue, ObjectNode options) {
    TestBroker.Reply r =
        broker.post("/api/v1/configure", object().put("queue", queue).set("options", options));
    if (r.status() != 200) {
      throw new AssertionError("configure answered " + r.status() + ": " + r.text());
    }
  }

  /** POST /api/v1/ack of one message with a status, naming a lease and a group when not null. */
  public TestBroker.Reply ackOne(JsonNode message, String leaseId, String group, String status) {
    ObjectNode ack =
        object()
            .put("transactionId", message.get("transactionId").asText())
            .put("partitionId", message.get("partitionId").asText())
            .put("status", status);
    if (leaseId != null) {
      ack.put("leaseId", leaseId);
    }
    if (group != null) {
      ack.put("consumerGroup", group);
    }
    return broker.post("/api/v1/ack", ack);
  }

  /** As {@link #ackOne(JsonNode, String, String, String)}, {@code completed}. */
  public TestBroker.Reply ackOne(JsonNode message, String leaseId, String group) {
    return ackOne(message, leaseId, group, "completed");
  }

  /** A query of one column of the cursor row of (the queue's only partition, group). */
  public static String cursorOf(String queue, String group, String column) {
    return "select "
        + column
        + " from queen.log_consumers c join queen.log_partitions p on p.id = c.partition_id"
        + " join queen.queues q on q.id = p.queue_id where q.name = '"
        + queue
        + "' and c.consumer_group = '"
        + group
        + "'";
  }

  /** The transaction ids of the listed messages that have the status, in their order. */
  public static List<String> withStatus(JsonNode messages, String status) {
    List<String> out = new ArrayList<>();
    messages.forEach(
        m -> {
          if (m.get("status").asText().equals(status)) {
            out.add(m.get("transactionId").asText());
          }
        });
    return out;
  }

  /** The transaction ids of a message list (GET /api/v1/messages...), in its order. */
  public List<String> messageIds(String path) {
    JsonNode body = broker.get(path).json();
    List<String> out = new ArrayList<>();
    (body.isArray() ? body : body.get("messages"))
        .forEach(m -> out.add(m.get("transactionId").asText()));
    return out;
  }
}
