package queen.server.pop;

import java.time.Duration;
import java.time.Instant;
import java.time.InstantSource;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

/**
 * Puts partitions back into their ring when a known time comes: the end of a windowBuffer quiet
 * period, the moment a delayedProcessing message becomes visible, the expiry of another worker's
 * lease. Until then nobody polls them; at the time the gate opens and a parked consumer claims.
 */
final class RevisitWheel implements AutoCloseable {
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

  /** Runs a housekeeping task on the wheel's thread every {@code period}. */
  void every(Duration period, Runnable task) {
    long ms = period.toMillis();
    timer.scheduleWithFixedDelay(task, ms, ms, TimeUnit.MILLISECONDS);
  }

  @Override
  public void close() {
    timer.shutdownNow();
  }
}
