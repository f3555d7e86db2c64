package queen.server.store;

import java.time.Instant;
import java.util.UUID;

/**
 * A pop of one named partition.
 *
 * @param workerId the lease id this pop will hold, a fresh UUIDv7 per request
 * @param newOnly subscriptionMode=new or subscriptionFrom=now, for a group's first contact
 * @param from subscriptionFrom as a timestamp, or null
 */
public record SpecificPop(
    String queue,
    String partition,
    String group,
    UUID workerId,
    int batch,
    boolean autoAck,
    boolean newOnly,
    Instant from) {}
