package queen.server.store;

import java.util.UUID;

/**
 * One acknowledgement.
 *
 * @param leaseId the lease the ack claims to hold, or null to skip the lease check
 * @param status completed, success, failed, retry or dlq
 * @param error the text stored with the dead letter, if the ack dead-letters the message
 */
public record AckItem(
    UUID partitionId, String transactionId, UUID leaseId, String status, String error) {}
