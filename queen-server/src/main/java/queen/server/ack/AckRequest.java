package queen.server.ack;

import java.util.UUID;

/**
 * One acknowledgement as received.
 *
 * @param leaseId as sent: null or empty skips the lease check; anything else must name a live lease
 * @param error the failure text kept with a dead letter, or null for the default
 */
public record AckRequest(
    UUID partitionId, String transactionId, String status, String leaseId, String error) {}
