package queen.server.store;

import java.util.List;
import java.util.UUID;

/**
 * One encoded segment to append to a partition: the blob and, in frame order, the transaction and
 * message ids of its messages (the transactionId index is written from these).
 */
public record SegmentWrite(
    UUID partitionId, byte[] blob, List<String> transactionIds, List<UUID> messageIds) {
  public SegmentWrite {
    if (transactionIds.isEmpty() || transactionIds.size() != messageIds.size()) {
      throw new IllegalArgumentException("a segment needs one transaction id per message");
    }
  }

  public int count() {
    return transactionIds.size();
  }
}
