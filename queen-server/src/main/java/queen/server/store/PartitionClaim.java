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
    List<SegmentSlice> slices) {}
