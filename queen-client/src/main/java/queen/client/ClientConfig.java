package queen.client;

import java.time.Duration;
import java.util.List;
import java.util.Map;

/** A client's settings after {@link Queen.Builder#build()} checked them. */
record ClientConfig(
    List<String> urls,
    LoadBalancing loadBalancing,
    int virtualNodes,
    boolean failover,
    Duration healthRetryAfter,
    Duration timeout,
    int retryAttempts,
    Duration retryDelay,
    String bearerToken,
    Map<String, String> headers) {}
