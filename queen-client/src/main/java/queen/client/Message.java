package queen.client;

import com.fasterxml.jackson.databind.JsonNode;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * A delivered message. Ack it with {@link Queen#ack(Message, boolean)} (or let {@link
 * QueueBuilder#consume} do it); the ack needs {@link #transactionId()} and {@link #partitionId()}
 * and, for a leased delivery, {@link #leaseId()}. Inside a handler, {@link #trace} records what
 * happened to it, for the broker's trace views.
 *
 * <pre>{@code
 * record Order(int total) {}
 * Order order = message.data(Order.class);
 * int total = message.data().get("total").asInt();
 * message.trace("order-flow", Map.of("step", "charged"));
 * }</pre>
 */
public final class Message {
  private final String id;
  private final String transactionId;
  private final String partitionId;
  private final String partition;
  private final String queue;
  private final String leaseId;
  private final String consumerGroup;
  private final JsonNode data;
  private final String traceId;
  private final String producerSub;
  private final Instant createdAt;
  private final Queen queen;

  private Message(JsonNode n, String fallbackQueue, Queen queen) {
    String q = Json.text(n, "queue");
    this.id = Json.text(n, "id");
    this.transactionId = Json.text(n, "transactionId");
    this.partitionId = Json.text(n, "partitionId");
    this.partition = Json.text(n, "partition");
    this.queue = q == null ? fallbackQueue : q;
    this.leaseId = n.path("leaseId").asText("");
    this.consumerGroup = n.path("consumerGroup").asText(Queen.QUEUE_MODE);
    this.data = n.has("data") ? n.get("data") : n.path("payload");
    this.traceId = Json.text(n, "traceId");
    this.producerSub = Json.text(n, "producerSub");
    this.createdAt = Json.instant(n, "createdAt");
    this.queen = queen;
  }

  static Message from(JsonNode n, String fallbackQueue, Queen queen) {
    return new Message(n, fallbackQueue, queen);
  }

  /**
   * A message read back from the JSON a pop answered (for example saved by {@code queen pop}), to
   * be acked later; it is not attached to a client, so its {@link #trace} answers false.
   */
  public static Message fromJson(JsonNode n) {
    return new Message(n, null, null);
  }

  /** The message id (a UUIDv7 the broker made). */
  public String id() {
    return id;
  }

  /** The producer's id of the message, unique within its partition. */
  public String transactionId() {
    return transactionId;
  }

  /** The partition's UUID. */
  public String partitionId() {
    return partitionId;
  }

  /** The partition's name. */
  public String partition() {
    return partition;
  }

  /** The queue's name. */
  public String queue() {
    return queue;
  }

  /** The lease this message was delivered under; empty when it was auto-acked. */
  public String leaseId() {
    return leaseId;
  }

  /** The consumer group it was delivered to. */
  public String consumerGroup() {
    return consumerGroup;
  }

  /** The payload as pushed. */
  public JsonNode data() {
    return data;
  }

  /** The payload converted to {@code type} by Jackson. */
  public <T> T data(Class<T> type) {
    return Json.convert(data, type);
  }

  /** The trace id the producer sent, or null. */
  public String traceId() {
    return traceId;
  }

  /** The authenticated producer, or null. */
  public String producerSub() {
    return producerSub;
  }

  /** When the broker stored it. */
  public Instant createdAt() {
    return createdAt;
  }

  /** As {@link #trace(List, String, Object)} with one name and event type {@code info}. */
  public boolean trace(String name, Object data) {
    return trace(name == null ? List.of() : List.of(name), "info", data);
  }

  /**
   * Records a trace of this message ({@code POST /api/v1/traces}): an event with its names and JSON
   * data, readable per message and by name. Like Queen's {@code msg.trace()} it never throws: a
   * trace must not fail the handler, so it answers whether the broker recorded it.
   */
  public boolean trace(List<String> names, String eventType, Object data) {
    Map<String, Object> body = new LinkedHashMap<>();
    body.put("transactionId", transactionId);
    body.put("partitionId", partitionId);
    body.put("consumerGroup", consumerGroup);
    body.put("traceNames", names);
    body.put("eventType", eventType);
    body.put("data", data == null ? Map.of() : data);
    if (queen == null) {
      return false;
    }
    try {
      return queen
          .transport
          .send(Transport.Call.post("/api/v1/traces", body, partitionId))
          .body()
          .path("success")
          .asBoolean(false);
    } catch (RuntimeException e) {
      return false;
    }
  }

  @Override
  public String toString() {
    return "Message[" + queue + "/" + partition + " " + transactionId + "]";
  }
}
