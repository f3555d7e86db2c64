package queen.server.store;

import java.time.Instant;
import java.util.List;
import java.util.UUID;

/**
 * The outcome of one claim on one partition.
 *
 * @param retryAt when a DEFERRED partition becomes visible, when a LOCKED lease expires, or when
 *     the lease of a DELIVERED one ends; null if unknown (and for an autoAck delivery)
 * @param attempt how many times this batch has been delivered from the same offset (1 = fresh)
 */
public record PartitionClaim(
    UUID partitionId,
    String partition,
    String queue,
    Verdict verdict,
    Instant retryAt,
    int attempt,
    List<SegmentSlice> slices) {

  /** This claim with only the slices of segments before {@code baseOffset}; null when none is. */
  public PartitionClaim before(long baseOffset) {
    List<SegmentSlice> kept = slices.stream().filter(s -> s.baseOffset() < baseOffset).toList();
    return kept.isEmpty()
        ? null
        : new PartitionClaim(partitionId, partition, queue, verdict, retryAt, attempt, kept);
  }
}
