package queen.server.codec;

import java.time.Instant;
import java.util.UUID;

/**
 * The id of a stored message, derived from where it is stored instead of stored with it: an RFC
 * 9562 version 7 UUID whose 48-bit time is its segment's created-at in milliseconds and whose 74
 * other bits are a hash of (partition id, offset). A (partition, offset) holds one message while
 * the partition lives (one removed as inactive and pushed again starts from offset 0 under its id,
 * and its messages differ from the old ones by their time), so the id is stable and every broker
 * derives the same one; it sorts by push time, as a generated v7 id does, and costs no storage (16
 * incompressible bytes a message otherwise). Changing this function changes the id of every stored
 * message: it is part of the storage format.
 */
public final class MessageIds {
  private MessageIds() {}

  public static UUID of(UUID partitionId, long offset, Instant createdAt) {
    long millis = createdAt.toEpochMilli();
    long h1 =
        mix(
            partitionId.getMostSignificantBits()
                ^ mix(partitionId.getLeastSignificantBits() + offset));
    long h2 = mix(h1 ^ (offset * 0x9E37_79B9_7F4A_7C15L));
    long msb = (millis << 16) | 0x7000L | (h1 & 0x0FFFL);
    long lsb = (h2 & 0x3FFF_FFFF_FFFF_FFFFL) | 0x8000_0000_0000_0000L;
    return new UUID(msb, lsb);
  }

  /** SplitMix64's finalizer: every input bit flips about half of the output bits. */
  private static long mix(long z) {
    z = (z ^ (z >>> 30)) * 0xBF58_476D_1CE4_E5B9L;
    z = (z ^ (z >>> 27)) * 0x94D0_49BB_1331_11EBL;
    return z ^ (z >>> 31);
  }
}
