package queen.server.pop;

import java.util.UUID;
import queen.server.codec.Frame;

/** One delivered message with where it came from; its id follows from there. */
public record PoppedMessage(
    UUID messageId,
    String queue,
    UUID partitionId,
    String partition,
    long offset,
    int attempt,
    long createdAtMicros,
    Frame frame) {}
