package queen.server.ops;

import java.time.Duration;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

/**
 * The timer of a background service: one daemon thread, named for the service, running a task at a
 * fixed delay after each run ends (a slow run never piles runs up). Shut it down to stop.
 */
final class Periodic {
  private Periodic() {}

  /** Runs {@code task} every {@code interval}, the first time one interval from now. */
  static ScheduledExecutorService every(String name, Duration interval, Runnable task) {
    ScheduledExecutorService timer =
        Executors.newSingleThreadScheduledExecutor(
            r -> {
              Thread t = new Thread(r, name);
              t.setDaemon(true);
              return t;
            });
    long ms = interval.toMillis();
    timer.scheduleWithFixedDelay(task, ms, ms, TimeUnit.MILLISECONDS);
    return timer;
  }
}
