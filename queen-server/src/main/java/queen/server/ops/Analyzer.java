package queen.server.ops;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.ScheduledExecutorService;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import queen.server.store.PlannerStatsStore;

/**
 * Keeps the planner's statistics of the broker's tables up to date where nothing else does (the
 * server's autovacuum off): every interval, an ANALYZE of the tables changed by more rows than
 * autovacuum would let pass. Retention's VACUUM gathers them too, but only every
 * RETENTION_INTERVAL: a queue filled with 10 million messages in three minutes had its group's page
 * of 1,000 cursors planned on estimates of 64 rows, 10,000 index probes (50 ms) where a hash join
 * takes 18. Several brokers may ask at once: a table another session is analyzing is skipped. A
 * failed check (database down) is logged and tried again at the next tick. On Citus it finds
 * nothing to do: the rows live in the workers' shards, whose statistics are the workers' own.
 */
public final class Analyzer implements AutoCloseable {
  private static final Logger log = LoggerFactory.getLogger(Analyzer.class);

  private final PlannerStatsStore store;
  private final Duration interval;
  private final Counter analyzed;
  private ScheduledExecutorService timer;
  private boolean closed;

  /** {@code interval}: ANALYZE_INTERVAL, zero for never. */
  public Analyzer(PlannerStatsStore store, Duration interval, MeterRegistry meters) {
    this.store = store;
    this.interval = interval;
    this.analyzed =
        Counter.builder("queen_tables_analyzed")
            .description(
                "Tables this broker had ANALYZEd, autovacuum off (skipped if another session was)")
            .register(meters);
  }

  public synchronized void start() {
    if (timer == null && !closed && !interval.isZero()) {
      timer = Periodic.every("queen-analyze", interval, this::tick);
    }
  }

  private void tick() {
    try {
      List<String> stale = store.stale();
      if (!stale.isEmpty()) {
        store.analyze(stale);
        analyzed.increment(stale.size());
        log.debug("analyzed {}", stale);
      }
    } catch (RuntimeException e) {
      Periodic.failed(log, "gathering planner statistics failed", interval, e);
    }
  }

  /** Stops the timer. Idempotent. */
  @Override
  public synchronized void close() {
    closed = true;
    timer = Periodic.stop(timer);
  }
}
