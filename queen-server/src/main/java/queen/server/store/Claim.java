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
 * @param from subscriptionFrom as a timestamp; with newOnly, the time the pop arrived (the
 *     subscription starts there, not at the claim)
 * @param maxBytes QUEEN_POP_MAX_BYTES: the decoded bytes after which the claim takes no more
 *     messages (it ends with the one that crosses, so one bigger than this still goes out)
 * @param keptBytes the largest segment, decoded, that the broker keeps for the pops that take the
 *     rest of it: PostgreSQL sends those pops a stub instead of a big blob ({@link
 *     SegmentSlice#leftOut}); 0 for blobs always (no cache, an autoAck pop, or a cache that lately
 *     held too few of them)
 */
public record Claim(
    String group,
    UUID workerId,
    int batch,
    int partitions,
    boolean autoAck,
    boolean newOnly,
    Instant from,
    long maxBytes,
    long keptBytes) {

  /** This claim under another worker id (lease id). */
  public Claim withWorkerId(UUID worker) {
    return new Claim(group, worker, batch, partitions, autoAck, newOnly, from, maxBytes, keptBytes);
  }

  /** This claim with another {@code keptBytes}. */
  public Claim withKeptBytes(long kept) {
    return new Claim(group, workerId, batch, partitions, autoAck, newOnly, from, maxBytes, kept);
  }

  String subscriptionMode() {
    return newOnly ? "new" : "all";
  }
}
