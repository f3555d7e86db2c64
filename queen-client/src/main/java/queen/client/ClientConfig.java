package queen.client;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.function.Supplier;

/**
 * A client's settings after {@link Queen.Builder#build()} checked them; {@code bearerToken} is
 * asked for a token before every request (null: none sent).
 */
record ClientConfig(
    List<String> urls,
    LoadBalancing loadBalancing,
    int virtualNodes,
    boolean failover,
    Duration healthRetryAfter,
    Duration timeout,
    int retryAttempts,
    Duration retryDelay,
    Supplier<String> bearerToken,
    Map<String, String> headers) {}
