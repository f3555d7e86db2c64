package queen.server.ops;

import java.time.Duration;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import queen.server.pop.PopSettings;
import queen.server.store.SystemStore;

/**
 * Keeps this broker's copy of the cluster-wide switches (pop maintenance, minimum pop waits, the
 * queues that encrypt) in step with the database, and follows the consumer-group resets made on
 * other brokers: one small query per interval, so pops read the switches from memory and a switch
 * set or a group sought on another broker takes effect here within the interval.
 */
public final class StateRefresher implements AutoCloseable {
  private static final Logger log = LoggerFactory.getLogger(StateRefresher.class);

  private final SystemStore store;
  private final PopSettings settings;
  private final ConsumerGroups groups;
  private final Consumer<SystemStore.State> followers;
  private final Duration interval;
  private final ReentrantLock reading = new ReentrantLock();
  private ScheduledExecutorService timer;

  /**
   * {@code followers} is told every state read, for the switches kept outside the pop path (the
   * queues that seal their payloads, push maintenance).
   */
  public StateRefresher(
      SystemStore store,
      PopSettings settings,
      ConsumerGroups groups,
      Consumer<SystemStore.State> followers,
      Duration interval) {
    this.store = store;
    this.settings = settings;
    this.groups = groups;
    this.followers = followers;
    this.interval = interval;
  }

  /** Reads the state once now (failing loudly), then every interval in the background. */
  public synchronized void start() {
    refresh();
    if (timer == null) {
      timer = Periodic.every("queen-state-refresher", interval, this::refreshQuietly);
    }
  }

  /**
   * Reads the state now, e.g. right after this broker changed it. One refresh at a time, each
   * applied before the next reads: a timed refresh that read a switch before a route set it, then
   * applied it after the route's own refresh, turned the switch back for an interval (a push went
   * past the buffer after push maintenance was answered on).
   */
  public void refresh() {
    // a lock, not a monitor: request threads take it around a database read, and on JDK 21 a
    // virtual thread blocked in a synchronized block pins its carrier
    reading.lock();
    try {
      SystemStore.State s = store.read(groups.floor());
      settings.update(s.popMaintenance(), s.minPopWaitMs());
      followers.accept(s);
      groups.apply(s.resets());
    } finally {
      reading.unlock();
    }
  }

  /**
   * As {@link #refresh()}, logging a failure instead of throwing it (the next interval retries).
   */
  public void refreshQuietly() {
    try {
      refresh();
    } catch (RuntimeException e) {
      Periodic.failed(log, "state refresh failed", interval, e);
    }
  }

  @Override
  public synchronized void close() {
    timer = Periodic.stop(timer);
  }
}
