package queen.server.pop;

import com.netflix.concurrency.limits.Limiter;
import com.netflix.concurrency.limits.limit.VegasLimit;
import com.netflix.concurrency.limits.limiter.BlockingLimiter;
import com.netflix.concurrency.limits.limiter.SimpleLimiter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import java.time.Duration;
import java.util.Optional;

/**
 * The shared serving limiter (the "Vegas permit") around the database work of pops: an adaptive
 * concurrency limit that shrinks when PostgreSQL's latency grows, so that a burst of pops queues
 * here, cheaply, instead of in the connection pool. Pops that only check their in-memory ring never
 * take a permit.
 */
final class ServingLimiter {
  /** A pop queues this long for a permit before it counts as overloaded (503, or park). */
  static final Duration PERMIT_WAIT = Duration.ofSeconds(2);

  private final SimpleLimiter<Void> limiter;
  private final Limiter<Void> queued;

  ServingLimiter(int maxConcurrency, MeterRegistry meters) {
    this.limiter =
        SimpleLimiter.newBuilder()
            .named("pop")
            .limit(
                VegasLimit.newBuilder()
                    .initialLimit(maxConcurrency)
                    .maxConcurrency(maxConcurrency)
                    .build())
            .build();
    this.queued = BlockingLimiter.wrap(limiter, PERMIT_WAIT);
    Gauge.builder("queen_pop_limiter_limit", limiter, SimpleLimiter::getLimit)
        .description("Current limit of the pop serving limiter")
        .register(meters);
    Gauge.builder("queen_pop_limiter_inflight", limiter, SimpleLimiter::getInflight)
        .description("Pops holding a serving permit")
        .register(meters);
  }

  /** A permit, waiting up to {@link #PERMIT_WAIT} for one; empty when none came. */
  Optional<Limiter.Listener> acquire() {
    return queued.acquire(null);
  }
}
