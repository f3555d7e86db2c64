package queen.server.store;

import java.time.Instant;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import queen.server.codec.MessageIds;

/**
 * What happened to one segment of a push.
 *
 * @param written the segment actually stored (duplicates removed), or null when every message was a
 *     duplicate
 * @param baseOffset the offset of its first message (when written)
 * @param createdAt its created_at (when written)
 * @param duplicates transaction ids that were already stored in the partition, with the id of the
 *     message that owns each
 */
public record AppendOutcome(
    UUID partitionId,
    SegmentWrite written,
    long baseOffset,
    Instant createdAt,
    Map<String, UUID> duplicates) {

  /** The id of each stored message, by transaction id. */
  public Map<String, UUID> storedIds() {
    Map<String, UUID> out = new HashMap<>();
    if (written != null) {
      for (int i = 0; i < written.count(); i++) {
        out.put(
            written.frames().get(i).transactionId(),
            MessageIds.of(partitionId, baseOffset + i, createdAt));
      }
    }
    return out;
  }

  /** Each partition's messages: transaction id to message id, the stored and the duplicates. */
  public static Map<UUID, Map<String, UUID>> idsByPartition(List<AppendOutcome> outcomes) {
    Map<UUID, Map<String, UUID>> out = new HashMap<>();
    for (AppendOutcome o : outcomes) {
      Map<String, UUID> ids = out.computeIfAbsent(o.partitionId(), k -> new HashMap<>());
      ids.putAll(o.storedIds());
      ids.putAll(o.duplicates());
    }
    return out;
  }

  /** The duplicates of several outcomes, by partition. */
  public static Map<UUID, Map<String, UUID>> duplicatesByPartition(List<AppendOutcome> outcomes) {
    Map<UUID, Map<String, UUID>> out = new HashMap<>();
    for (AppendOutcome o : outcomes) {
      if (!o.duplicates().isEmpty()) {
        out.computeIfAbsent(o.partitionId(), k -> new HashMap<>()).putAll(o.duplicates());
      }
    }
    return out;
  }
}
