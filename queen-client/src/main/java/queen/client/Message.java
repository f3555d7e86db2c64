package queen.client;

import com.fasterxml.jackson.databind.JsonNode;
import java.time.Instant;

/**
 * A delivered message. Ack it with {@link Queen#ack(Message, boolean)} (or let {@link
 * QueueBuilder#consume} do it); the ack needs {@link #transactionId()} and {@link #partitionId()}
 * and, for a leased delivery, {@link #leaseId()}.
 *
 * <pre>{@code
 * record Order(int total) {}
 * Order order = message.data(Order.class);
 * int total = message.data().get("total").asInt();
 * }</pre>
 *
 * @param id the message id (a UUIDv7 the broker made)
 * @param transactionId the producer's id of the message, unique within its partition
 * @param partitionId the partition's UUID
 * @param partition the partition's name
 * @param queue the queue's name
 * @param leaseId the lease this message was delivered under; empty when it was auto-acked
 * @param consumerGroup the consumer group it was delivered to
 * @param data the payload as pushed
 * @param traceId the trace id the producer sent, or null
 * @param producerSub the authenticated producer, or null
 * @param createdAt when the broker stored it
 */
public record Message(
    String id,
    String transactionId,
    String partitionId,
    String partition,
    String queue,
    String leaseId,
    String consumerGroup,
    JsonNode data,
    String traceId,
    String producerSub,
    Instant createdAt) {

  /** The payload converted to {@code type} by Jackson. */
  public <T> T data(Class<T> type) {
    return Json.convert(data, type);
  }

  static Message from(JsonNode n, String fallbackQueue) {
    String queue = Json.text(n, "queue");
    return new Message(
        Json.text(n, "id"),
        Json.text(n, "transactionId"),
        Json.text(n, "partitionId"),
        Json.text(n, "partition"),
        queue == null ? fallbackQueue : queue,
        n.path("leaseId").asText(""),
        n.path("consumerGroup").asText(Queen.QUEUE_MODE),
        n.has("data") ? n.get("data") : n.path("payload"),
        Json.text(n, "traceId"),
        Json.text(n, "producerSub"),
        Json.instant(n, "createdAt"));
  }
}
