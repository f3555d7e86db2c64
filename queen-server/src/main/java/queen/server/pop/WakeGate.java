package queen.server.pop;

import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;

/**
 * Where long-polls of one queue park until something may have changed: a local push, an
 * ack-promote, a revisit-wheel tick. A waiter reads {@link #generation()} before it looks for work
 * and parks only while the generation is still the one it read, so a wake that lands between the
 * look and the park is never lost.
 */
public final class WakeGate {
  private final ReentrantLock lock = new ReentrantLock();
  private final Condition opened = lock.newCondition();
  private final AtomicInteger parked = new AtomicInteger();
  private volatile long generation;

  /** Read before looking for work; pass to {@link #await}. */
  public long generation() {
    return generation;
  }

  /** Wakes every waiter. */
  public void open() {
    lock.lock();
    try {
      generation++;
      opened.signalAll();
    } finally {
      lock.unlock();
    }
  }

  /**
   * Parks until the gate opens after {@code seen} was read, or the time is up.
   *
   * @return true when the gate opened
   */
  public boolean await(long seen, long timeout, TimeUnit unit) throws InterruptedException {
    long nanos = unit.toNanos(timeout);
    parked.incrementAndGet();
    lock.lock();
    try {
      while (generation == seen && nanos > 0) {
        nanos = opened.awaitNanos(nanos);
      }
      return generation != seen;
    } finally {
      lock.unlock();
      parked.decrementAndGet();
    }
  }

  /** Long-polls parked here right now. */
  public int parked() {
    return parked.get();
  }
}
