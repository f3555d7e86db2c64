package queen.server.pop;

import java.time.Duration;
import java.time.Instant;
import java.time.InstantSource;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Puts partitions back into their ring when a known time comes: the end of a windowBuffer quiet
 * period, the moment a delayedProcessing message becomes visible, the expiry of another worker's
 * lease. Until then nobody polls them; at the time the gate opens and a parked consumer claims.
 */
final class RevisitWheel implements AutoCloseable {
  private static final Logger log = LoggerFactory.getLogger(RevisitWheel.class);
  private final HotLists hot;
  private final InstantSource clock;
  private final ScheduledExecutorService timer =
      Executors.newSingleThreadScheduledExecutor(
          r -> {
            Thread t = new Thread(r, "queen-revisit-wheel");
            t.setDaemon(true);
            return t;
          });

  RevisitWheel(HotLists hot, InstantSource clock) {
    this.hot = hot;
    this.clock = clock;
  }

  void schedule(String queue, String group, String partition, Instant at) {
    long delay = Math.max(0, Duration.between(clock.instant(), at).toMillis());
    // a millisecond late rather than early: SQL decides visibility at its own clock
    timer.schedule(() -> hot.revisit(queue, group, partition), delay + 1, TimeUnit.MILLISECONDS);
  }

  /**
   * Runs a housekeeping task on the wheel's thread every {@code period}. A run that throws is
   * logged and the next runs as planned: the timer would drop the task for good.
   */
  void every(Duration period, String what, Runnable task) {
    long ms = period.toMillis();
    Runnable guarded =
        () -> {
          try {
            task.run();
          } catch (RuntimeException e) {
            log.warn("{} failed once: {}", what, e.toString());
          }
        };
    timer.scheduleWithFixedDelay(guarded, ms, ms, TimeUnit.MILLISECONDS);
  }

  @Override
  public void close() {
    timer.shutdownNow();
  }
}
