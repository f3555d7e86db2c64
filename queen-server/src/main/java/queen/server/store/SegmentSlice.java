package queen.server.store;

import java.time.Instant;

/**
 * A delivered slice of one segment: frames {@code [startIdx, startIdx + take)} of the blob, whose
 * first frame has offset {@code baseOffset}.
 *
 * <p>The blob of a big segment whose slice starts past its first frame is not sent again when the
 * broker says it keeps such segments decoded ({@link Claim#keptBytes}): the pop before decoded it
 * whole, and {@code blob} is then a stub that names the stored blob by its length and the checksum
 * it ends with ({@code queen.pop_blob}). A broker that does not hold the decoded segment after all
 * reads the blob with {@link PopStore#blobs}.
 */
public record SegmentSlice(
    long baseOffset, int startIdx, int take, int msgCount, Instant createdAt, byte[] blob) {

  /** The stored size from which a slice past the first frame may get a stub (queen.pop_blob). */
  public static final int STUBBED_FROM = 8192;

  /** A stub: version byte 0 (a stored blob's is 1 or 2), u32 length, the blob's last four bytes. */
  private static final int STUB_BYTES = 9;

  /** The blob is a stub: PostgreSQL left the stored one out. */
  public boolean leftOut() {
    return blob.length == STUB_BYTES && blob[0] == 0;
  }

  /** The length of the stored blob. */
  public int storedLength() {
    return leftOut() ? int32(blob, 1) : blob.length;
  }

  /**
   * The checksum the stored blob ends with (SegmentCodec's layout): a rewritten blob has another.
   */
  public int storedChecksum() {
    return blob.length < 4 ? 0 : int32(blob, blob.length - 4);
  }

  /** This slice with the stored blob in place of its stub. */
  public SegmentSlice withBlob(byte[] stored) {
    return new SegmentSlice(baseOffset, startIdx, take, msgCount, createdAt, stored);
  }

  private static int int32(byte[] b, int at) {
    return (b[at] & 0xff) << 24
        | (b[at + 1] & 0xff) << 16
        | (b[at + 2] & 0xff) << 8
        | b[at + 3] & 0xff;
  }
}
