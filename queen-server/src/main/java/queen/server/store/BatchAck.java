package queen.server.store;

import java.util.UUID;

/** A whole leased batch of one partition acknowledged at once: the cursor goes to batchEnd. */
public record BatchAck(UUID partitionId, UUID leaseId, long batchEnd) {}
