package queen.server.codec;

import java.time.Instant;
import java.util.UUID;

/**
 * The id of a stored message, derived from where it is stored instead of stored with it: an RFC
 * 9562 version 7 UUID whose 48-bit time is its segment's created-at in milliseconds and whose 74
 * other bits are a hash of its partition id plus its offset. A (partition, offset) holds one
 * message while the partition lives (one removed as inactive and pushed again starts from offset 0
 * under its id, and its messages differ from the old ones by their time), so the id is stable and
 * every broker derives the same one; it costs no storage (16 incompressible bytes a message
 * otherwise). It sorts by push time, as a generated v7 id does, and within a millisecond by offset
 * in its partition: Queen's stream runners order a batch by (createdAt, id) and ack its last
 * message, and the messages of one segment share their created-at (with a hash of (partition,
 * offset), a runner acked a message in the middle of its batch and counted the rest twice). Ids of
 * two partitions meet only where their hashes lie as far apart as the offsets, one chance in 2^74 a
 * pair. Changing this function changes the id of every stored message: it is part of the storage
 * format (changed on 2026-12-07 from a hash of both, see docs/storage.md).
 */
public final class MessageIds {
  private static final long LOW_62 = (1L << 62) - 1;

  private MessageIds() {}

  public static UUID of(UUID partitionId, long offset, Instant createdAt) {
    long millis = createdAt.toEpochMilli();
    long h1 =
        mix(partitionId.getMostSignificantBits() ^ mix(partitionId.getLeastSignificantBits()));
    long h2 = mix(h1 ^ 0x9E37_79B9_7F4A_7C15L);
    // the partition's 74-bit base (12 bits, then 62) plus the offset, with the carry
    long low = (h2 & LOW_62) + (offset & LOW_62);
    long high = ((h1 & 0x0FFFL) + (low >>> 62) + (offset >>> 62)) & 0x0FFFL;
    long msb = (millis << 16) | 0x7000L | high;
    long lsb = (low & LOW_62) | 0x8000_0000_0000_0000L;
    return new UUID(msb, lsb);
  }

  /** SplitMix64's finalizer: every input bit flips about half of the output bits. */
  private static long mix(long z) {
    z = (z ^ (z >>> 30)) * 0xBF58_476D_1CE4_E5B9L;
    z = (z ^ (z >>> 27)) * 0x94D0_49BB_1331_11EBL;
    return z ^ (z >>> 31);
  }
}
