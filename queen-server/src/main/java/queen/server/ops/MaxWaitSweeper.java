package queen.server.ops;

import java.time.Duration;
import java.util.Map;
import java.util.concurrent.ScheduledExecutorService;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import queen.server.store.DeadLetterStore;

/**
 * Moves messages that waited longer than their queue's maxWaitTimeSeconds to the dead letters,
 * every {@code interval}. Several brokers may sweep one database: the sweep claims cursors with
 * SKIP LOCKED, like a pop. A failed sweep (database down) is logged and retried at the next tick.
 */
public final class MaxWaitSweeper implements AutoCloseable {
  private static final Logger log = LoggerFactory.getLogger(MaxWaitSweeper.class);

  /** Messages per transaction: keeps each sweep transaction short. */
  static final int CHUNK = 1_000;

  private final DeadLetterStore store;
  private final Duration interval;
  private final Statistics statistics;
  private ScheduledExecutorService timer;

  /** {@code statistics}: counts what it moves as dead-lettered, in the queues' series. */
  public MaxWaitSweeper(DeadLetterStore store, Duration interval, Statistics statistics) {
    this.store = store;
    this.interval = interval;
    this.statistics = statistics;
  }

  public synchronized void start() {
    if (timer == null) {
      timer = Periodic.every("queen-max-wait-sweeper", interval, this::sweep);
    }
  }

  /** One sweep: chunks until less than a full chunk was moved. Returns how many were moved. */
  public int sweep() {
    int moved = 0;
    try {
      int n;
      do {
        Map<String, Integer> byQueue = store.expireWaiting(CHUNK);
        n = 0;
        for (Map.Entry<String, Integer> e : byQueue.entrySet()) {
          statistics.deadLettered(e.getKey(), e.getValue());
          n += e.getValue();
        }
        moved += n;
      } while (n == CHUNK);
    } catch (RuntimeException e) {
      Periodic.failed(log, "max-wait sweep failed", interval, e);
    }
    if (moved > 0) {
      log.info("moved {} messages past maxWaitTimeSeconds to the dead letters", moved);
    }
    return moved;
  }

  @Override
  public synchronized void close() {
    timer = Periodic.stop(timer);
  }
}
