package queen.client;

import com.fasterxml.jackson.databind.JsonNode;
import java.time.Instant;

/**
 * A message that was dead-lettered: its retries ran out, or it was acked {@code dlq}.
 *
 * <pre>{@code
 * DeadLetter d = queen.queue("orders").dlq().get().getFirst();
 * log.warn("{} failed: {}", d.transactionId(), d.errorMessage());
 * }</pre>
 *
 * @param id the message id
 * @param transactionId the producer's id of the message
 * @param partitionId the partition's UUID
 * @param queue the queue's name
 * @param partition the partition's name
 * @param consumerGroup the group that gave up on it
 * @param errorMessage the error of the last failed ack (a consumer's exception text)
 * @param retryCount the retries spent before it was dead-lettered
 * @param data the payload
 * @param createdAt when it was pushed
 * @param failedAt when it was dead-lettered
 */
public record DeadLetter(
    String id,
    String transactionId,
    String partitionId,
    String queue,
    String partition,
    String consumerGroup,
    String errorMessage,
    int retryCount,
    JsonNode data,
    Instant createdAt,
    Instant failedAt) {

  /** The payload converted to {@code type} by Jackson. */
  public <T> T data(Class<T> type) {
    return Json.convert(data, type);
  }

  static DeadLetter from(JsonNode n) {
    return new DeadLetter(
        Json.text(n, "id"),
        Json.text(n, "transactionId"),
        Json.text(n, "partitionId"),
        Json.text(n, "queue"),
        Json.text(n, "partition"),
        Json.text(n, "consumerGroup"),
        Json.text(n, "errorMessage"),
        n.path("retryCount").asInt(0),
        n.path("data"),
        Json.instant(n, "createdAt"),
        Json.instant(n, "failedAt"));
  }
}
