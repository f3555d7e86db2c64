package queen.server.pop;

import java.util.List;
import java.util.UUID;

/** Told of every leased delivery, all its partitions at once (the ack registry registers it). */
@FunctionalInterface
public interface DeliveryListener {
  /** One leased pop delivered these partitions' messages under {@code leaseId}. */
  void leased(UUID leaseId, String group, List<Leased> partitions);

  /** The messages {@code transactionIds} of a partition, ending at {@code batchEnd}. */
  record Leased(
      UUID partitionId,
      String queue,
      String partition,
      List<String> transactionIds,
      long batchEnd) {}
}
