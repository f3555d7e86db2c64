package queen.server.push;

import java.util.UUID;

/**
 * The fate of one pushed item, in input order.
 *
 * @param messageId the stored message, or for a duplicate the message that owns the key
 * @param partitionId the partition written to
 */
public record PushResult(
    Status status,
    String transactionId,
    UUID messageId,
    UUID partitionId,
    UUID traceId,
    String queue) {

  /**
   * Queued: stored now. Duplicate: its (partition, transactionId) was already stored. Buffered:
   * written to the local buffer, stored when it drains (no message or partition id yet).
   */
  public enum Status {
    QUEUED,
    DUPLICATE,
    BUFFERED
  }
}
