package queen.server.store;

/** A partition named the way producers name it: queue name and partition name. */
public record PartitionKey(String queue, String partition) {}
