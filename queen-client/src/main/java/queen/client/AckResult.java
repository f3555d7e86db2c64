package queen.client;

/**
 * The broker's verdict on one ack. A refused ack ({@code success} false) changes nothing; the usual
 * reasons are {@code "Invalid or expired lease"} (the lease ran out and the message will be
 * delivered again) and {@code "Message not found"}.
 *
 * <pre>{@code
 * AckResult r = queen.ack(message, true);
 * if (!r.success()) log.info("not acked: {}", r.error());
 * }</pre>
 *
 * @param transactionId the acked message
 * @param success whether the ack took effect
 * @param error why not, or null
 * @param leaseReleased whether this ack ended the batch's lease
 * @param dlq whether the message went to the dead letters
 */
public record AckResult(
    String transactionId, boolean success, String error, boolean leaseReleased, boolean dlq) {}
