package queen.server.push;

import java.util.UUID;

/**
 * One message as a producer sent it.
 *
 * @param payload the message body, UTF-8 JSON bytes
 * @param transactionId the idempotency key, or null to have one generated
 * @param traceId optional
 * @param producerSub JWT subject of the producer, or null without auth
 */
public record PushItem(
    String queue,
    String partition,
    byte[] payload,
    String transactionId,
    UUID traceId,
    String producerSub) {}
