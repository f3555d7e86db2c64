package queen.server.ops;

import java.time.Duration;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import queen.server.store.StoreException;

/**
 * The timer of a background service: one daemon thread, named for the service, running a task at a
 * fixed delay after each run ends (a slow run never piles runs up). Shut it down to stop.
 */
final class Periodic {
  private Periodic() {}

  /**
   * Logs a failed run that will be retried: at DEBUG when the database is away (the database logs
   * that once, as it goes and as it comes back), else at WARN, never with a stack trace.
   */
  static void failed(Logger log, String what, Duration retry, RuntimeException e) {
    if (e instanceof StoreException s && s.outage()) {
      log.debug("{} while the database is away, retrying in {}: {}", what, retry, e.getMessage());
    } else {
      log.warn("{}, retrying in {}: {}", what, retry, e.getMessage());
    }
  }

  /**
   * Stops the timer if there is one (a run in progress is interrupted); null, for the caller to
   * keep in its place.
   */
  static ScheduledExecutorService stop(ScheduledExecutorService timer) {
    if (timer != null) {
      timer.shutdownNow();
    }
    return null;
  }

  /**
   * Runs {@code task} every {@code interval}, the first time one interval from now. A run that
   * throws is logged and the next one comes as usual: the executor suppressed every run after one
   * that threw, and a retention stopped so, without a word, let storage grow for good.
   */
  static ScheduledExecutorService every(String name, Duration interval, Runnable task) {
    ScheduledExecutorService timer =
        Executors.newSingleThreadScheduledExecutor(
            r -> {
              Thread t = new Thread(r, name);
              t.setDaemon(true);
              return t;
            });
    long ms = interval.toMillis();
    Runnable guarded =
        () -> {
          try {
            task.run();
          } catch (RuntimeException | Error e) {
            // out of memory ends the JVM (the launcher's ExitOnOutOfMemoryError); a stack
            // overflow, a class that failed to link, are one run's
            LoggerFactory.getLogger(Periodic.class)
                .error("{} failed, running again in {}", name, interval, e);
          }
        };
    timer.scheduleWithFixedDelay(guarded, ms, ms, TimeUnit.MILLISECONDS);
    return timer;
  }
}
