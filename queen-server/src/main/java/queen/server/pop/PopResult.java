package queen.server.pop;

import java.util.List;
import java.util.UUID;

/**
 * What a pop delivered.
 *
 * @param leaseId the lease all messages share, or null for autoAck
 * @param partitionsClaimed how many partitions delivered
 */
public record PopResult(
    UUID leaseId, String group, int partitionsClaimed, List<PoppedMessage> messages) {

  public boolean isEmpty() {
    return messages.isEmpty();
  }
}
