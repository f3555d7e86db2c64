package queen.server.mesh;

import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Applies what the hint listener hears on a thread of its own, in the order heard. The listener
 * then only reads: an apply that waits on the pool (a state refresh) no longer stops its session
 * from taking notifications, whose reading holds a snapshot that keeps dead rows from cleanup and
 * whose backlog, once PostgreSQL's notification queue is full, fails every NOTIFY. One thread, not
 * one per hint: a push hint run apart could overtake the refresh of a configure sent before it.
 *
 * <p>When applying falls {@code capacity} hints behind, the hints waiting are dropped for one
 * recovery in their place (read the state again, wake every parked pop): what a listener that had
 * to reconnect does, the floor any lost hint has.
 */
final class Applier implements AutoCloseable {
  private static final Logger log = LoggerFactory.getLogger(Applier.class);
  private static final long WARN_EVERY_NANOS = TimeUnit.MINUTES.toNanos(1);

  private final BlockingQueue<Runnable> waiting;
  private final Runnable recover;
  private final AtomicLong overruns = new AtomicLong();
  private long warnedAt; // the listener's alone
  private final Thread thread;
  private volatile boolean closed;

  Applier(int capacity, Runnable recover) {
    this.waiting = new ArrayBlockingQueue<>(capacity);
    this.recover = recover;
    this.thread = Thread.ofPlatform().daemon().name("queen-hints-apply").start(this::applyLoop);
  }

  /** Queues one hint's work; called by the listener only, which never waits here. */
  void offer(Runnable work) {
    if (waiting.offer(work)) {
      return;
    }
    long n = overruns.incrementAndGet();
    long now = System.nanoTime();
    // a storm of NOTIFYs overran it 20 times in 3 ms: one line a minute, with the count
    if (n == 1 || now - warnedAt >= WARN_EVERY_NANOS) {
      warnedAt = now;
      log.warn(
          "applying hints fell {} behind: they are dropped, the state read again and every parked"
              + " pop woken ({} times since start; logged at most once a minute)",
          waiting.size(),
          n);
    }
    waiting.clear();
    // the listener is the only producer and the queue was just emptied: both fit
    waiting.add(recover);
    waiting.add(work);
  }

  /** Hints heard and not yet applied. */
  int behind() {
    return waiting.size();
  }

  /** Times the hints waiting were dropped for a recovery. */
  long overruns() {
    return overruns.get();
  }

  private void applyLoop() {
    while (!closed) { // also when a hint swallowed the interrupt (a pool's wait can)
      Runnable work;
      try {
        work = waiting.take();
      } catch (InterruptedException e) {
        return;
      }
      try {
        work.run();
      } catch (RuntimeException e) {
        // one hint lost: the floor (a pop's backoff, the timed state refresh) covers it
        log.warn("a hint could not be applied: {}", e.toString());
      }
    }
  }

  @Override
  public void close() {
    closed = true;
    thread.interrupt();
    try {
      thread.join(2_000);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }
}
