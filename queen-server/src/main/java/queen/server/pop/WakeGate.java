package queen.server.pop;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.Iterator;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.ReentrantLock;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Where long-polls of one queue park until something may have changed: a local push, an
 * ack-promote, a revisit-wheel tick. A waiter reads {@link #generation()} before it looks for work
 * and parks only while the generation is still the one it read, so a wake that lands between the
 * look and the park is never lost. Work that any one waiter can take wakes one waiter ({@link
 * #open(int)}): waking every parked long-poll for one message cost a core at 50 pushes a second
 * with 5,000 parked. The others see the new generation when their wait ends.
 *
 * <p>A parked long-poll holds no thread: it is a {@link Waiter} in this gate's queue, resumed once
 * by a wake, its deadline or its client leaving. A thread parked per long-poll kept about 15 kB of
 * stack for it (docs/benchmarks.md, "An asynchronous long-poll").
 */
public final class WakeGate {
  private static final Logger log = LoggerFactory.getLogger(WakeGate.class);

  /** What a parked long-poll does once its wait ends: {@code woken} as {@link #park} returns it. */
  @FunctionalInterface
  public interface Resume {
    void resume(boolean woken);
  }

  /** One parked long-poll, queued until it is resumed. */
  static final class Waiter {
    private final String group;
    private final boolean picky;
    private final Caller caller;
    private final Resume resume;
    private ScheduledFuture<?> deadline; // under the lock

    private Waiter(String group, boolean picky, Caller caller, Resume resume) {
      this.group = group;
      this.picky = picky;
      this.caller = caller;
      this.resume = resume;
    }
  }

  /**
   * Ends the waits that run out, for every gate, and the timed waits of {@link #after}: one daemon
   * thread that only hands work on.
   */
  private static final ScheduledThreadPoolExecutor DEADLINES = deadlines();

  private final ReentrantLock lock = new ReentrantLock();
  // longest parked first; removal by identity when a deadline or a departure ends one early
  private final LinkedHashSet<Waiter> waiters = new LinkedHashSet<>();
  private int picky; // under the lock
  // the consumer groups of the parked waiters, and of those not picky, under the lock
  private final Map<String, Integer> groups = new HashMap<>();
  private final Map<String, Integer> wholeQueueGroups = new HashMap<>();
  private volatile int parked;
  private volatile long generation;

  private static ScheduledThreadPoolExecutor deadlines() {
    ScheduledThreadPoolExecutor timer =
        new ScheduledThreadPoolExecutor(
            1, Thread.ofPlatform().name("pop-deadlines").daemon().factory());
    // a waiter woken before its deadline takes its timer out of the queue at once
    timer.setRemoveOnCancelPolicy(true);
    return timer;
  }

  /**
   * Resumes {@code resume}, unwoken, after {@code nanos}, on no gate: no wake ends the wait, and
   * none is taken from the long-polls parked on a gate.
   */
  static void after(long nanos, Resume resume) {
    DEADLINES.schedule(() -> resume.resume(false), nanos, TimeUnit.NANOSECONDS);
  }

  /** Read before looking for work; pass to {@link #park}. */
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
    List<Waiter> woken;
    lock.lock();
    try {
      generation++;
      woken = take(n >= waiters.size() || !oneAtATime() ? waiters.size() : n);
    } finally {
      lock.unlock();
    }
    resume(woken);
  }

  /**
   * Passes a wake on to one waiter where wakes go one at a time (see {@link #open(int)}); where
   * every waiter was woken there is nothing to pass on, and waking everyone again would only repeat
   * the herd. With nobody parked the generation still moves: a pop looking now, which may have
   * found the work locked by the one passing on, looks once more instead of parking.
   */
  public void passOn() {
    List<Waiter> woken = List.of();
    lock.lock();
    try {
      if (oneAtATime()) {
        generation++;
        woken = take(1);
      }
    } finally {
      lock.unlock();
    }
    resume(woken);
  }

  /** Whether any parked waiter can take any work: one group's, none picky. Under the lock. */
  private boolean oneAtATime() {
    return picky == 0 && groups.size() <= 1;
  }

  /**
   * Parks until the gate opens after {@code seen} was read, the time is up or the caller leaves. A
   * picky waiter takes only some of the work (a pop of one partition), so a wake meant for one may
   * not be its.
   *
   * <p>When the wait is over at once (the gate opened since {@code seen}, or the caller has left)
   * this answers it and {@code resume} never runs; otherwise it answers null and {@code resume}
   * runs once, later, on the thread that ended the wait (a push's, the deadline timer's, a
   * departure's), never under the gate's lock: it must hand real work to a thread of its own.
   *
   * @return null when parked; true when the gate had opened since {@code seen}; false when the
   *     caller has left. Resumed with true when a wake reached it, false when the time ran out,
   *     even if the gate opened meanwhile for others, or the caller left
   */
  public Boolean park(
      long seen,
      long timeout,
      TimeUnit unit,
      String group,
      boolean picky,
      Caller caller,
      Resume resume) {
    Waiter w = new Waiter(group, picky, caller, resume);
    lock.lock();
    try {
      // the gate is set before gone is read, as Caller.leave() sets gone before it reads the gate
      caller.park(this, w);
      if (caller.gone() || generation != seen) {
        caller.unpark();
        return !caller.gone();
      }
      // counted under the lock: an open sees exactly the waiters it can wake
      waiters.add(w);
      parked = waiters.size();
      groups.merge(group, 1, Integer::sum);
      if (picky) {
        this.picky++;
      } else {
        wholeQueueGroups.merge(group, 1, Integer::sum);
      }
      caller.park(this, w);
      w.deadline = DEADLINES.schedule(() -> expire(w), unit.toNanos(timeout), TimeUnit.NANOSECONDS);
      return null;
    } finally {
      lock.unlock();
    }
  }

  /** Ends the wait of the long-poll parked here for {@code caller}, if it is parked here now. */
  void release(Caller caller) {
    Waiter w;
    lock.lock();
    try {
      w = caller.waiter();
    } finally {
      lock.unlock();
    }
    if (w != null) {
      expire(w);
    }
  }

  /** The deadline of a waiter: it is resumed unwoken, if it is still parked. */
  private void expire(Waiter w) {
    lock.lock();
    try {
      if (!waiters.remove(w)) {
        return; // already resumed
      }
      dequeued(w);
    } finally {
      lock.unlock();
    }
    w.resume.resume(false);
  }

  /** Takes the {@code n} longest parked waiters out of the queue. Under the lock. */
  private List<Waiter> take(int n) {
    if (n <= 0 || waiters.isEmpty()) {
      return List.of();
    }
    List<Waiter> taken = new ArrayList<>(Math.min(n, waiters.size()));
    Iterator<Waiter> it = waiters.iterator();
    while (it.hasNext() && taken.size() < n) {
      Waiter w = it.next();
      it.remove();
      dequeued(w);
      taken.add(w);
    }
    return taken;
  }

  /** Under the lock: a waiter left the queue. */
  private void dequeued(Waiter w) {
    parked = waiters.size();
    groups.compute(w.group, (g, k) -> k == 1 ? null : k - 1);
    if (w.picky) {
      picky--;
    } else {
      wholeQueueGroups.compute(w.group, (g, k) -> k == 1 ? null : k - 1);
    }
    w.caller.unpark();
    w.deadline.cancel(false);
  }

  private static void resume(List<Waiter> woken) {
    for (Waiter w : woken) {
      try {
        w.resume.resume(true);
      } catch (RuntimeException e) {
        // the others are out of the queue too: each must still be resumed
        log.error("resuming a parked long-poll failed", e);
      }
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
    return parked;
  }
}
