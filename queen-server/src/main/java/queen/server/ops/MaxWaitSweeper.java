package queen.server.ops;

import java.time.Duration;
import java.util.Map;
import java.util.concurrent.ScheduledExecutorService;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import queen.server.store.DeadLetterStore;

/**
 * Moves messages that waited longer than their queue's maxWaitTimeSeconds to the dead letters,
 * every {@code interval}. The brokers of one database sweep in turns (a claim in the database), and
 * a sweep claims cursors with SKIP LOCKED, like a pop, so one that overlaps another broker's (an
 * older build's, say) is safe. A failed sweep (database down) is logged and retried at the next
 * tick.
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
      timer = Periodic.every("queen-max-wait-sweeper", interval, this::tick);
    }
  }

  /**
   * A sweep when it is this broker's turn; what its last scan took spaces the next turns. Each scan
   * reads every backlogged cursor of the queues with a maxWait, and each broker sweeping at every
   * interval multiplied that by the brokers.
   */
  private void tick() {
    try {
      if (!store.claimSweep(interval.toMillis())) {
        return;
      }
      long started = System.nanoTime();
      try {
        store.sweepTook(sweep());
      } catch (RuntimeException e) {
        // a sweep that failed (a statement timeout, say) spaces the turns by what it cost: else
        // one that fails for good ran at every interval
        try {
          store.sweepTook(Duration.ofNanos(System.nanoTime() - started).toMillis());
        } catch (RuntimeException also) {
          e.addSuppressed(also);
        }
        throw e;
      }
    } catch (RuntimeException e) {
      Periodic.failed(log, "max-wait sweep failed", interval, e);
    }
  }

  /**
   * One sweep: chunks until less than a full chunk was moved. Returns the milliseconds its last
   * scan took, the one that found less than a chunk: what a sweep costs when little waited long.
   */
  private long sweep() {
    int moved = 0;
    long scanNanos;
    try {
      int n;
      do {
        DeadLetterStore.Expired expired = store.expireWaiting(CHUNK);
        scanNanos = expired.scanNanos();
        n = 0;
        for (Map.Entry<String, Integer> e : expired.byQueue().entrySet()) {
          statistics.deadLettered(e.getKey(), e.getValue());
          n += e.getValue();
        }
        moved += n;
      } while (n == CHUNK);
    } finally {
      if (moved > 0) {
        log.info("moved {} messages past maxWaitTimeSeconds to the dead letters", moved);
      }
    }
    return Duration.ofNanos(scanNanos).toMillis();
  }

  @Override
  public synchronized void close() {
    timer = Periodic.stop(timer);
  }
}
