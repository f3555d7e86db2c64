package queen.server.codec;

import java.util.Arrays;
import java.util.Objects;
import java.util.UUID;

/**
 * One message inside a segment blob.
 *
 * <p>What follows from the message's place is not stored. Its offset is the segment's base offset
 * plus the frame's position, which is why a segment must hold consecutive offsets. Its creation
 * time is the segment row's created_at: every message of a segment came with one push, and that
 * time (stamped under the partition lock) is the one the visibility gates read. Its id is derived
 * from both ({@link MessageIds}).
 *
 * @param transactionId the producer's idempotency key, verbatim
 * @param traceId optional trace id, or null
 * @param producerSub the JWT subject of the producer, or null
 * @param flags {@link #FLAG_ENCRYPTED} or 0
 * @param payload the message body as UTF-8 JSON bytes (encrypted when flagged)
 */
public record Frame(
    String transactionId, UUID traceId, String producerSub, int flags, byte[] payload) {

  /** The payload is encrypted at rest; the broker decrypts it before rendering. */
  public static final int FLAG_ENCRYPTED = 1;

  /**
   * The message was deleted by an operator: its payload is gone, its place and transactionId stay
   * (a log cannot renumber, and a re-push of the id is still a duplicate), and no pop delivers it.
   */
  public static final int FLAG_DELETED = 16;

  public Frame {
    Objects.requireNonNull(transactionId, "transactionId");
    Objects.requireNonNull(payload, "payload");
    if ((flags & ~(FLAG_ENCRYPTED | FLAG_DELETED)) != 0) {
      throw new IllegalArgumentException("unknown frame flags: " + flags);
    }
  }

  /** A deleted frame's remains: the transactionId alone. */
  public Frame deleted() {
    return new Frame(transactionId, null, null, FLAG_DELETED, new byte[0]);
  }

  public boolean isDeleted() {
    return (flags & FLAG_DELETED) != 0;
  }

  @Override
  public boolean equals(Object o) {
    return o instanceof Frame f
        && transactionId.equals(f.transactionId)
        && Objects.equals(traceId, f.traceId)
        && Objects.equals(producerSub, f.producerSub)
        && flags == f.flags
        && Arrays.equals(payload, f.payload);
  }

  @Override
  public int hashCode() {
    return transactionId.hashCode() * 31 + Arrays.hashCode(payload);
  }

  @Override
  public String toString() {
    return "Frame[" + transactionId + ", " + payload.length + " bytes]";
  }
}
