package queen.server.pop;

import java.util.List;
import java.util.UUID;

/** Told of every leased delivery, per partition (the ack registry registers it). */
@FunctionalInterface
public interface DeliveryListener {
  /** The messages {@code transactionIds} of a partition, ending at {@code batchEnd}, are leased. */
  void leased(
      UUID leaseId,
      UUID partitionId,
      String queue,
      String partition,
      String group,
      List<String> transactionIds,
      long batchEnd);
}
