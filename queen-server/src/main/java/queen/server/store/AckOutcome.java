package queen.server.store;

/** The result of one acknowledgement, in the shape of Queen's ack answer. */
public record AckOutcome(
    int index,
    boolean success,
    String error,
    String queueName,
    String partitionName,
    boolean leaseReleased,
    boolean dlq) {}
