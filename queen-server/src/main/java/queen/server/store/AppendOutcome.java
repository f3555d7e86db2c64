package queen.server.store;

import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;

/**
 * What happened to one segment of a push.
 *
 * @param written the segment actually stored (duplicates removed), or null when every message was a
 *     duplicate
 * @param duplicates transaction ids that were already stored in the partition, with the id of the
 *     message that owns each
 */
public record AppendOutcome(UUID partitionId, SegmentWrite written, Map<String, UUID> duplicates) {

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
