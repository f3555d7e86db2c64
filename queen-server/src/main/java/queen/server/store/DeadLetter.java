package queen.server.store;

import java.time.Instant;
import java.util.UUID;

/** A dead-lettered message as stored: the payload is the message's JSON bytes. */
public record DeadLetter(
    UUID partitionId,
    String partition,
    String queue,
    String group,
    long offset,
    UUID messageId,
    String transactionId,
    UUID traceId,
    String producerSub,
    int flags,
    byte[] payload,
    String error,
    int retryCount,
    Instant createdAt,
    Instant failedAt) {}
