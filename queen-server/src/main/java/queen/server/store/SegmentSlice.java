package queen.server.store;

import java.time.Instant;

/**
 * A delivered slice of one segment: frames {@code [startIdx, startIdx + take)} of the blob, whose
 * first frame has offset {@code baseOffset}.
 */
public record SegmentSlice(
    long baseOffset, int startIdx, int take, int msgCount, Instant createdAt, byte[] blob) {}
