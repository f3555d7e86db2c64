package queen.server.pop;

import java.util.List;
import java.util.UUID;

/** Told of every leased delivery, all its partitions at once (the ack registry registers it). */
public interface DeliveryListener {
  /** One leased pop delivered these partitions' messages under {@code leaseId}. */
  void leased(UUID leaseId, String group, List<Leased> partitions);

  /**
   * The lease also covers these messages, which were not delivered because an operator deleted
   * them: they must be acknowledged under it, so that the cursor passes them whatever the consumer
   * acks.
   */
  void skipped(UUID leaseId, String group, List<Skipped> messages);

  /**
   * A leased pop failed after its claim and gave its lease {@code leaseId} of the group's partition
   * back: it may be taken again now.
   */
  void gaveBack(UUID leaseId, String group, String queue, String partition);

  /** A deleted message inside a lease. */
  record Skipped(UUID partitionId, String transactionId) {}

  /** The messages {@code transactionIds} of a partition, the lease ending at {@code batchEnd}. */
  record Leased(
      UUID partitionId,
      String queue,
      String partition,
      List<String> transactionIds,
      long batchEnd) {}
}
