package queen.server.pop;

import java.util.HashMap;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;

/**
 * Where long-polls of one queue park until something may have changed: a local push, an
 * ack-promote, a revisit-wheel tick. A waiter reads {@link #generation()} before it looks for work
 * and parks only while the generation is still the one it read, so a wake that lands between the
 * look and the park is never lost. Work that any one waiter can take wakes one waiter ({@link
 * #open(int)}): waking every parked long-poll for one message cost a core at 50 pushes a second
 * with 5,000 parked. The others see the new generation when their wait ends.
 */
public final class WakeGate {
  private final ReentrantLock lock = new ReentrantLock();
  private final Condition opened = lock.newCondition();
  private final AtomicInteger parked = new AtomicInteger();
  private final AtomicInteger picky = new AtomicInteger();
  // the consumer groups of the parked waiters, and of those not picky, under the lock
  private final Map<String, Integer> groups = new HashMap<>();
  private final Map<String, Integer> wholeQueueGroups = new HashMap<>();
  private volatile long generation;

  /** Read before looking for work; pass to {@link #await}. */
  public long generation() {
    return generation;
  }

  /** Wakes every waiter. */
  public void open() {
    open(Integer.MAX_VALUE);
  }

  /**
   * Wakes at most {@code n} waiters, the longest parked first, for work any waiter of the gate can
   * take; every waiter while waiters of several consumer groups or a picky one are parked, since a
   * wake could reach a waiter that cannot take the work.
   */
  public void open(int n) {
    if (n <= 0) {
      return;
    }
    lock.lock();
    try {
      generation++;
      if (n >= parked.get() || !oneAtATime()) {
        opened.signalAll();
      } else {
        for (int i = 0; i < n; i++) {
          opened.signal();
        }
      }
    } finally {
      lock.unlock();
    }
  }

  /**
   * Passes a wake on to one waiter where wakes go one at a time (see {@link #open(int)}); where
   * every waiter was woken there is nothing to pass on, and waking everyone again would only repeat
   * the herd. With nobody parked the generation still moves: a pop looking now, which may have
   * found the work locked by the one passing on, looks once more instead of parking.
   */
  public void passOn() {
    lock.lock();
    try {
      if (oneAtATime()) {
        generation++;
        if (parked.get() > 0) {
          opened.signal();
        }
      }
    } finally {
      lock.unlock();
    }
  }

  /** Whether any parked waiter can take any work: one group's, none picky. Under the lock. */
  private boolean oneAtATime() {
    return picky.get() == 0 && groups.size() <= 1;
  }

  /**
   * Parks until the gate opens after {@code seen} was read, or the time is up. A picky waiter takes
   * only some of the work (a pop of one partition), so a wake meant for one may not be its.
   *
   * @return true when the gate had opened before the park or woke this waiter; false when the time
   *     ran out, even if the gate opened meanwhile for others, or the caller left
   */
  public boolean await(
      long seen, long timeout, TimeUnit unit, String group, boolean picky, Caller caller)
      throws InterruptedException {
    long nanos = unit.toNanos(timeout);
    lock.lock();
    // counted under the lock: an open sees exactly the waiters it can signal
    parked.incrementAndGet();
    groups.merge(group, 1, Integer::sum);
    if (picky) {
      this.picky.incrementAndGet();
    } else {
      wholeQueueGroups.merge(group, 1, Integer::sum);
    }
    caller.park(this);
    try {
      if (caller.gone()) {
        return false;
      }
      if (generation != seen) {
        return true;
      }
      while (generation == seen && nanos > 0) {
        try {
          nanos = opened.awaitNanos(nanos);
        } catch (InterruptedException e) {
          if (caller.gone()) {
            return false; // release() woke this waiter alone: its client has gone
          }
          throw e;
        }
      }
      return generation != seen && nanos > 0;
    } finally {
      caller.unpark();
      if (caller.gone()) {
        Thread.interrupted(); // a release() that raced a signal or the deadline is spent here
      }
      parked.decrementAndGet();
      groups.compute(group, (g, n) -> n == 1 ? null : n - 1);
      if (picky) {
        this.picky.decrementAndGet();
      } else {
        wholeQueueGroups.compute(group, (g, n) -> n == 1 ? null : n - 1);
      }
      lock.unlock();
    }
  }

  /** Wakes the waiter parked for {@code caller}, if it is parked here now (see {@link Caller}). */
  void release(Caller caller) {
    lock.lock();
    try {
      caller.interruptWaiting();
    } finally {
      lock.unlock();
    }
  }

  /** The consumer groups of the long-polls that are parked here right now and not picky. */
  Set<String> wholeQueueGroups() {
    lock.lock();
    try {
      return Set.copyOf(wholeQueueGroups.keySet());
    } finally {
      lock.unlock();
    }
  }

  /** Whether a long-poll of the consumer group is parked here right now. */
  boolean parks(String group) {
    lock.lock();
    try {
      return groups.containsKey(group);
    } finally {
      lock.unlock();
    }
  }

  /** Long-polls parked here right now. */
  public int parked() {
    return parked.get();
  }
}
