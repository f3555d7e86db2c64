package queen.client;

import com.fasterxml.jackson.databind.node.ObjectNode;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.ReentrantLock;

/**
 * The client's push buffers, one per queue and partition. A buffer sends when it holds its message
 * count (on the pushing thread, which paces producers) or when its time since the first waiting
 * item runs out (on a timer thread). Sends of one buffer never overlap, so its items reach the
 * broker in push order. A send that fails for want of a broker (no connection, a 5xx) keeps its
 * items for the next attempt, and a push that filled the buffer does not throw for it: the push was
 * taken, and a caller retrying it would send its messages twice. A request the broker refuses (a
 * 400 or 413) is sent again in halves, and an item refused on its own is dropped: sent again it
 * would be refused again; the push that filled the buffer throws, a timed send logs it. Any other
 * answer (a 401 for an expired token, say) keeps them. While sends fail, pushes no longer send on
 * the pushing thread (each waited out the transport's retries, about 3 s, so a producer crawled
 * instead of filling the buffer), the timer tries again after a growing pause (1 s, doubled, at
 * most 10 s: a 401 was retried every {@code millis}), and a buffer holds at most {@link
 * #HELD_BATCHES} times its message count and then refuses pushes. A closed client's buffers refuse
 * pushes as every other call does.
 */
final class PushBuffers implements AutoCloseable {
  private static final System.Logger LOG = System.getLogger("queen.client");

  /**
   * How many batches of its message count a buffer holds while its sends fail before it refuses
   * pushes (it grew at the producer's speed for as long as the broker refused or was away).
   */
  static final int HELD_BATCHES = 10;

  private final Queen queen;
  private final Map<String, Buffer> buffers = new ConcurrentHashMap<>();
  private final AtomicLong flushes = new AtomicLong();
  private ScheduledExecutorService timer;
  private volatile boolean closed;

  PushBuffers(Queen queen) {
    this.queen = queen;
  }

  private final class Buffer {
    final String queue;
    final String partition;
    final int count;
    final long millis;

    /**
     * Held for a whole send, answer and retries included: a lock, not a monitor, because on JDK 21
     * a virtual thread (a consumer's handler pushing) blocked on or inside a monitor pins its
     * carrier, and two of them could stop every virtual thread of a 2-core machine for the send.
     */
    final ReentrantLock sendLock = new ReentrantLock();

    final List<ObjectNode> items = new ArrayList<>();

    /** Items taken out for the send in progress, still counted as buffered. */
    int sending;

    long firstAt;
    boolean timerSet;

    /**
     * Sent empty and out of the map (a buffer per partition pushed to once, say per customer, was
     * kept for good); a push that still finds it goes to the next one.
     */
    boolean retired;

    /** Why the last send failed, until one passes: what a push refused by a full buffer names. */
    volatile RuntimeException lastFailure;

    /** The timer's pause before the next try while sends fail (see {@link Backoff}). */
    Duration retryPause = Duration.ZERO;

    Buffer(String queue, String partition, int count, long millis) {
      this.queue = queue;
      this.partition = partition;
      this.count = count;
      this.millis = millis;
    }

    /**
     * Sends everything it holds, {@code count} items per request. A request the broker refuses is
     * sent again in halves, so that only an item refused on its own is dropped (a request over the
     * broker's QUEEN_MAX_PUSH_ITEMS or body size, or one item the broker refuses, dropped every
     * other item of the request with it).
     */
    void flush() {
      sendLock.lock();
      try {
        int size = count;
        while (true) {
          List<ObjectNode> batch;
          synchronized (this) {
            if (items.isEmpty()) {
              retired = true;
              buffers.remove(queue + "/" + partition, this);
              return;
            }
            int n = Math.min(size, items.size());
            batch = new ArrayList<>(items.subList(0, n));
            items.subList(0, n).clear();
            sending = n;
            if (items.isEmpty()) {
              firstAt = 0;
            }
          }
          try {
            PushItems.send(queen, batch, queue + ":" + partition);
            flushes.incrementAndGet();
            lastFailure = null;
            synchronized (this) {
              sending = 0;
              retryPause = Duration.ZERO;
            }
          } catch (RuntimeException e) {
            boolean split = refused(e) && batch.size() > 1;
            synchronized (this) {
              sending = 0;
            }
            if (!refused(e) || split) {
              synchronized (this) {
                items.addAll(0, batch);
                if (firstAt == 0) {
                  firstAt = System.nanoTime();
                }
              }
            }
            if (split) {
              size = batch.size() / 2;
              continue;
            }
            lastFailure = refused(e) ? null : e; // an item refused alone: the sends work
            throw e;
          }
        }
      } finally {
        sendLock.unlock();
      }
    }

    void timedFlush() {
      try {
        flush();
      } catch (RuntimeException e) {
        // set before the failure's pause doubles: a push meanwhile scheduled the next try with
        // the old pause
        synchronized (this) {
          timerSet = false;
        }
        failedInBackground(this, e);
        return;
      }
      synchronized (this) {
        timerSet = false;
      }
      schedule(this); // what was pushed after the send took its items
    }
  }

  /**
   * A 400 or 413: the broker refused the items themselves, and would again. Not a 401 or 403 (a
   * token that expired or a role that changed: the items are fine) nor any other status.
   */
  private static boolean refused(RuntimeException e) {
    return e instanceof QueenException q && (q.status() == 400 || q.status() == 413);
  }

  private void failedInBackground(Buffer b, RuntimeException e) {
    if (refused(e)) {
      LOG.log(
          System.Logger.Level.ERROR,
          "buffered push to " + b.queue + "/" + b.partition + " refused, its items dropped: " + e);
      schedule(b); // the items after the refused ones still go
      return;
    }
    Duration pause;
    synchronized (b) {
      b.retryPause = Backoff.next(b.retryPause);
      pause = b.retryPause;
    }
    LOG.log(
        System.Logger.Level.WARNING,
        "buffered push to "
            + b.queue
            + "/"
            + b.partition
            + " failed, will retry in "
            + pause
            + ": "
            + e);
    schedule(b);
  }

  void add(String queue, String partition, int count, long millis, List<ObjectNode> items) {
    refuseIfClosed();
    Buffer b;
    boolean full;
    while (true) {
      b =
          buffers.computeIfAbsent(
              queue + "/" + partition, k -> new Buffer(queue, partition, count, millis));
      if (take(b, queue, partition, items)) {
        break;
      }
    }
    synchronized (b) {
      full = b.items.size() >= b.count;
    }
    // while its sends fail the timer tries again: a push that waited out a send's retries each
    // time paced a producer at one push per 3 s, and the buffer never filled to its refusal
    if (!full || b.lastFailure != null) {
      schedule(b);
      return;
    }
    try {
      b.flush();
    } catch (RuntimeException e) {
      if (refused(e)) {
        schedule(b); // the items after the refused ones still go
        throw e;
      }
      failedInBackground(b, e);
    }
  }

  /**
   * Adds the items to {@code b}; false when it was retired meanwhile (the caller takes another).
   */
  private boolean take(Buffer b, String queue, String partition, List<ObjectNode> items) {
    synchronized (b) {
      if (b.retired) {
        return false;
      }
      // under the buffer's lock: a push that passed the check before a close began would be
      // taken after close sent everything, and never sent
      refuseIfClosed();
      RuntimeException failing = b.lastFailure;
      if (failing != null && b.items.size() + items.size() > (long) b.count * HELD_BATCHES) {
        // nothing taken: the caller may retry the push without sending anything twice
        throw new QueenException(
            "push buffer of "
                + queue
                + "/"
                + partition
                + " full ("
                + b.items.size()
                + " items) while its sends fail: "
                + failing.getMessage(),
            failing);
      }
      if (b.items.isEmpty()) {
        b.firstAt = System.nanoTime();
      }
      b.items.addAll(items);
      return true;
    }
  }

  void flush(String queue, String partition) {
    Buffer b = buffers.get(queue + "/" + partition);
    if (b != null) {
      b.flush();
    }
  }

  void flushAll() {
    RuntimeException first = null;
    for (Buffer b : buffers.values()) {
      // past an item refused on its own (dropped), the items behind it: a close stopped at it
      // and the rest was lost with the timer
      boolean more = true;
      while (more) {
        try {
          b.flush();
          more = false;
        } catch (RuntimeException e) {
          first = first == null ? e : first;
          more = refused(e);
        }
      }
    }
    if (first != null) {
      throw first;
    }
  }

  /** How many buffers it keeps: those holding items or sending them. */
  int kept() {
    return buffers.size();
  }

  BufferStats stats() {
    int active = 0;
    int waiting = 0;
    long oldest = 0;
    long now = System.nanoTime();
    for (Buffer b : buffers.values()) {
      synchronized (b) {
        if (!b.items.isEmpty() || b.sending > 0) {
          active++;
          waiting += b.items.size() + b.sending;
          oldest = b.firstAt == 0 ? oldest : Math.max(oldest, now - b.firstAt);
        }
      }
    }
    return new BufferStats(active, waiting, Duration.ofNanos(oldest), flushes.get());
  }

  private void schedule(Buffer b) {
    long delay;
    synchronized (b) {
      if (b.timerSet || b.items.isEmpty() || closed) {
        return;
      }
      b.timerSet = true;
      delay = Math.max(b.millis, b.retryPause.toMillis());
    }
    synchronized (this) {
      // no timer made again after a close, whose flush sent what is left
      if (!closed) {
        timer().schedule(b::timedFlush, delay, TimeUnit.MILLISECONDS);
      }
    }
  }

  private void refuseIfClosed() {
    if (closed) {
      throw new IllegalStateException("the client is closed");
    }
  }

  /** Under this object's lock. */
  private ScheduledExecutorService timer() {
    if (timer == null) {
      timer =
          Executors.newSingleThreadScheduledExecutor(
              r -> Thread.ofPlatform().daemon().name("queen-push-buffer").unstarted(r));
    }
    return timer;
  }

  /**
   * Sends what is left, then stops the timer; throws if some items could not be sent. A caller
   * interrupted before (a producer thread told to end, closing in its finally) still sends them:
   * its flag, which cancelled every send at once, is set again after.
   */
  @Override
  public void close() {
    synchronized (this) {
      closed = true;
    }
    boolean interrupted = Thread.interrupted();
    try {
      flushAll();
    } finally {
      synchronized (this) {
        if (timer != null) {
          timer.shutdownNow();
        }
      }
      if (interrupted) {
        Thread.currentThread().interrupt();
      }
    }
  }
}
