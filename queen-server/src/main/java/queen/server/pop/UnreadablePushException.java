package queen.server.pop;

import java.util.UUID;
import queen.server.codec.CorruptSegmentException;

/** A stored push of one partition that a pop could not decode. */
final class UnreadablePushException extends CorruptSegmentException {
  private final transient UUID partitionId;

  UnreadablePushException(String message, UUID partitionId, Throwable cause) {
    super(message, cause);
    this.partitionId = partitionId;
  }

  UUID partitionId() {
    return partitionId;
  }
}
