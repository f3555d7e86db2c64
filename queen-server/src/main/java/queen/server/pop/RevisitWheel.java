package queen.server.pop;

import java.time.Duration;
import java.time.Instant;
import java.time.InstantSource;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
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
  private final ScheduledThreadPoolExecutor timer =
      new ScheduledThreadPoolExecutor(
          1,
          r -> {
            Thread t = new Thread(r, "queen-revisit-wheel");
            t.setDaemon(true);
            return t;
          });

  RevisitWheel(HotLists hot, InstantSource clock) {
    this.hot = hot;
    this.clock = clock;
    timer.setRemoveOnCancelPolicy(true);
  }

  private record Key(String queue, String group, String partition) {}

  private record Due(Instant at, ScheduledFuture<?> task) {}

  /**
   * The one revisit due for each partition of a group. Every claim that finds a partition gated
   * asks for its revisit, and each had a task of its own kept until the gate's time: a partition
   * claimed once a second under an hour's delayedProcessing held 3,600 of them.
   */
  private final Map<Key, Due> due = new ConcurrentHashMap<>();

  /** Revisits the partition at {@code at}, unless a revisit as soon or sooner is due already. */
  void schedule(String queue, String group, String partition, Instant at) {
    Key key = new Key(queue, group, partition);
    due.compute(
        key,
        (k, old) -> {
          if (old != null && !at.isBefore(old.at())) {
            return old;
          }
          if (old != null) {
            old.task().cancel(false);
          }
          long delay = Math.max(0, Duration.between(clock.instant(), at).toMillis());
          // a millisecond late rather than early: SQL decides visibility at its own clock
          ScheduledFuture<?> task =
              timer.schedule(
                  () -> {
                    due.computeIfPresent(key, (x, d) -> d.at().equals(at) ? null : d);
                    hot.revisit(queue, group, partition);
                  },
                  delay + 1,
                  TimeUnit.MILLISECONDS);
          return new Due(at, task);
        });
  }

  /** Tasks on the wheel. */
  int scheduled() {
    return timer.getQueue().size();
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
