package queen.server.push;

import java.util.List;
import java.util.Map;
import java.util.UUID;
import queen.server.store.AppendOutcome;

/**
 * What an append stored, by partition and transaction id: the id of every message (a stored
 * message's id follows from where it was stored, so it is known only now), and which of them were
 * duplicates of messages stored before.
 */
public record Appended(Map<UUID, Map<String, UUID>> ids, Map<UUID, Map<String, UUID>> duplicates) {
  public static Appended of(List<AppendOutcome> outcomes) {
    return new Appended(
        AppendOutcome.idsByPartition(outcomes), AppendOutcome.duplicatesByPartition(outcomes));
  }

  UUID id(UUID partitionId, String transactionId) {
    return ids.getOrDefault(partitionId, Map.of()).get(transactionId);
  }

  boolean duplicate(UUID partitionId, String transactionId) {
    return duplicates.getOrDefault(partitionId, Map.of()).containsKey(transactionId);
  }
}
