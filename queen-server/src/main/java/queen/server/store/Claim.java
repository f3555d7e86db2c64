package queen.server.store;

import java.time.Instant;
import java.util.UUID;

/**
 * What one pop asks of the partitions it tries.
 *
 * @param workerId the lease id this pop will hold, a fresh UUIDv7 per request
 * @param batch the most messages in total
 * @param partitions the most partitions to claim
 * @param newOnly subscriptionMode=new or subscriptionFrom=now, for a named group's first contact
 * @param from subscriptionFrom as a timestamp, or null
 */
public record Claim(
    String group,
    UUID workerId,
    int batch,
    int partitions,
    boolean autoAck,
    boolean newOnly,
    Instant from) {

  String subscriptionMode() {
    return newOnly ? "new" : "all";
  }
}
