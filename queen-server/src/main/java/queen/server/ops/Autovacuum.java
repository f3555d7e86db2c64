package queen.server.ops;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.ScheduledExecutorService;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import queen.server.store.AutovacuumStore;

/**
 * Does for the broker's tables what the server's autovacuum would, while it is off: every interval,
 * a VACUUM of the tables with more dead rows than autovacuum lets pass (but the segments, which
 * retention's cycle deletes and vacuums), and an ANALYZE of those changed by more rows since their
 * statistics. Retention's VACUUM comes only at the end of each cycle: under a steady pop+ack load,
 * the cursor table's 41 rows took 1.7 MB in two minutes (its updates HOT, their dead versions left
 * behind), and a long cycle let it grow for as long; and a queue filled with 10 million messages in
 * three minutes had its group's page of 1,000 cursors planned on estimates of 64 rows, 10,000 index
 * probes (50 ms) where a hash join takes 18. Several brokers may ask at once: a table another
 * session is vacuuming or analyzing is skipped. A failed check (database down) is logged and tried
 * again at the next tick. On Citus it finds nothing to do: the rows live in the workers' shards,
 * which their own autovacuum keeps.
 */
public final class Autovacuum implements AutoCloseable {
  private static final Logger log = LoggerFactory.getLogger(Autovacuum.class);

  private final AutovacuumStore store;
  private final Duration interval;
  private final boolean vacuums;
  private final Counter analyzed;
  private final Counter vacuumed;
  private ScheduledExecutorService timer;
  private boolean closed;

  /**
   * {@code interval}: ANALYZE_INTERVAL, zero for never; {@code vacuums}: false when
   * RETENTION_VACUUM is off (the operator vacuums), then it only analyzes.
   */
  public Autovacuum(
      AutovacuumStore store, Duration interval, boolean vacuums, MeterRegistry meters) {
    this.store = store;
    this.interval = interval;
    this.vacuums = vacuums;
    this.analyzed =
        Counter.builder("queen_tables_analyzed")
            .description(
                "Tables this broker had ANALYZEd, autovacuum off (skipped if another session was)")
            .register(meters);
    this.vacuumed =
        Counter.builder("queen_tables_vacuumed")
            .description(
                "Tables this broker had VACUUMed past autovacuum's threshold, autovacuum off"
                    + " (skipped if another session was)")
            .register(meters);
  }

  public synchronized void start() {
    if (timer == null && !closed && !interval.isZero()) {
      timer = Periodic.every("queen-autovacuum", interval, this::tick);
    }
  }

  private void tick() {
    try {
      AutovacuumStore.Due due = store.due();
      List<String> analyze = due.analyze();
      if (vacuums && !due.vacuum().isEmpty()) {
        store.vacuum(due.vacuum());
        vacuumed.increment(due.vacuum().size());
        log.debug("vacuumed {}", due.vacuum());
        // its VACUUM analyzed them too
        analyze = analyze.stream().filter(t -> !due.vacuum().contains(t)).toList();
      }
      if (!analyze.isEmpty()) {
        store.analyze(analyze);
        analyzed.increment(analyze.size());
        log.debug("analyzed {}", analyze);
      }
    } catch (RuntimeException e) {
      Periodic.failed(log, "vacuuming or analyzing the broker's tables failed", interval, e);
    }
  }

  /** Stops the timer. Idempotent. */
  @Override
  public synchronized void close() {
    closed = true;
    timer = Periodic.stop(timer);
  }
}
