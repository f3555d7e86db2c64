package queen.server.pop;

import java.util.UUID;
import queen.server.codec.CorruptSegmentException;

/** A stored push of one partition that a pop could not decode. */
final class UnreadablePushException extends CorruptSegmentException {
  private final transient UUID partitionId;
  private final long baseOffset;

  UnreadablePushException(String message, UUID partitionId, long baseOffset, Throwable cause) {
    super(message, cause);
    this.partitionId = partitionId;
    this.baseOffset = baseOffset;
  }

  UUID partitionId() {
    return partitionId;
  }

  /** The offset of the push's first message. */
  long baseOffset() {
    return baseOffset;
  }
}
