package queen.server.pop;

import java.time.Instant;

/**
 * A pop as the consumer asked for it, defaults applied.
 *
 * @param batch the most messages to deliver
 * @param newOnly subscriptionMode=new or subscriptionFrom=now: on a named group's first contact,
 *     skip the existing backlog
 * @param from subscriptionFrom as a timestamp, or null
 */
public record PopRequest(
    String queue,
    String partition,
    String group,
    int batch,
    boolean autoAck,
    boolean newOnly,
    Instant from) {}
