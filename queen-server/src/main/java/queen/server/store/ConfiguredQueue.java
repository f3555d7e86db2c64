package queen.server.store;

import java.util.UUID;

/** A queue as configure left it, with the id of its Default partition. */
public record ConfiguredQueue(
    UUID queueId,
    UUID defaultPartitionId,
    String name,
    String namespace,
    String task,
    QueueOptions options) {}
