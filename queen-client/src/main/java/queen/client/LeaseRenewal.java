package queen.client;

import java.time.Instant;

/**
 * The outcome of extending a lease.
 *
 * <pre>{@code
 * LeaseRenewal r = queen.renew(message);
 * if (r.success()) log.info("leased until {}", r.expiresAt());
 * }</pre>
 *
 * @param leaseId the lease
 * @param success whether it was extended
 * @param expiresAt its new expiry, or null when it was not extended
 * @param error {@code "Lease not found"} or {@code "Lease already expired"}, or null
 */
public record LeaseRenewal(String leaseId, boolean success, Instant expiresAt, String error) {}
