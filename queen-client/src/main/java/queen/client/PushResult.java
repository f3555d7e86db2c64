package queen.client;

/**
 * What the broker did with one pushed item. A {@code duplicate} is not an error: the partition
 * already held a message with this transaction id (for example, a retried push whose first answer
 * was lost), and {@code messageId} is that message's.
 *
 * <pre>{@code
 * PushResult r = queen.queue("orders").push(order).getFirst();
 * log.info("{} {}", r.status(), r.messageId());
 * }</pre>
 *
 * @param status {@code queued}, {@code duplicate}, {@code buffered} (held client-side by {@link
 *     QueueBuilder#buffer}) or {@code failed}
 * @param transactionId the item's transaction id
 * @param messageId the stored message's id, or null
 * @param partitionId the partition's UUID when queued, else null
 * @param error why it failed, or null
 */
public record PushResult(
    String status, String transactionId, String messageId, String partitionId, String error) {

  public boolean queued() {
    return "queued".equals(status);
  }

  public boolean duplicate() {
    return "duplicate".equals(status);
  }
}
