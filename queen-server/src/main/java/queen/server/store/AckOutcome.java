package queen.server.store;

import java.util.UUID;

/**
 * The result of one acknowledgement, in the shape of Queen's ack answer, plus what the broker needs
 * to schedule around it.
 *
 * @param leaseEnded the request released the lease this item was under
 * @param hasMore the lease ended and the partition still holds messages for the group
 */
public record AckOutcome(
    int index,
    boolean success,
    String error,
    String queueName,
    String partitionName,
    boolean leaseReleased,
    boolean dlq,
    UUID partitionId,
    String group,
    boolean leaseEnded,
    boolean hasMore) {

  public AckOutcome withIndex(int other) {
    return new AckOutcome(
        other,
        success,
        error,
        queueName,
        partitionName,
        leaseReleased,
        dlq,
        partitionId,
        group,
        leaseEnded,
        hasMore);
  }
}
