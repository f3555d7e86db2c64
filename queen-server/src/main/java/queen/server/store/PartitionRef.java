package queen.server.store;

import java.util.UUID;

/** A resolved partition. */
public record PartitionRef(UUID queueId, UUID partitionId, String queue, String partition) {}
