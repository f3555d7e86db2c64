package queen.server.pop;

import java.time.Instant;

/**
 * A pop as the consumer asked for it, defaults applied.
 *
 * @param batch the most messages to deliver, across all claimed partitions
 * @param partitions the most partitions to claim (1 on the single-partition route)
 * @param newOnly subscriptionMode=new or subscriptionFrom=now: on a named group's first contact,
 *     skip the existing backlog
 * @param from subscriptionFrom as a timestamp; with newOnly, the time the pop arrived
 * @param waitMillis how long to long-poll for something to deliver; 0 answers at once
 */
public record PopRequest(
    PopTarget target,
    String group,
    int batch,
    int partitions,
    boolean autoAck,
    boolean newOnly,
    Instant from,
    long waitMillis) {}
