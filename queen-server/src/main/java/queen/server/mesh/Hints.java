package queen.server.mesh;

import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.LockSupport;
import java.util.concurrent.locks.ReentrantLock;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import queen.server.store.Notifications;
import queen.server.store.StoreException;

/**
 * Hints between brokers over PostgreSQL LISTEN/NOTIFY. After work commits, its broker notes what
 * other brokers should act on (a partition that received data or became ready, a lease released, a
 * switch or group changed); for a few milliseconds the notes gather, duplicates fold, and then go
 * out as few NOTIFYs as fit PostgreSQL's payload limit. Every broker listens on one dedicated
 * connection and applies what others sent exactly as it applies its own work, in the order sent and
 * on a thread apart from the listening one ({@link Applier}), so a push through A wakes a long-poll
 * parked on B at once. Hints are an accelerator, never the floor: a lost one costs at most about
 * one and a half POP_WAIT_MAX_INTERVAL_MS (the ring watch's reseed, or a parked pop's own backoff)
 * or one state refresh, and a listener that had to reconnect wakes every parked pop and refreshes
 * the state once.
 */
public final class Hints implements AutoCloseable {
  private static final Logger log = LoggerFactory.getLogger(Hints.class);
  static final String CHANNEL = "queen_hints";

  /** How long notes gather before they go out: cheap next to a pop's latency, many per NOTIFY. */
  private static final long GATHER_NANOS = TimeUnit.MILLISECONDS.toNanos(2);

  private static final int MAX_PENDING = 100_000;

  /** Hints heard and not yet applied before they are dropped for a recovery: at most 8 MB. */
  private static final int MAX_UNAPPLIED = 1_000;

  /** What a broker does with the hints of the others. */
  public interface Receiver {
    /**
     * Messages and payload bytes stored in a partition; {@code count} -1: an amount not known (a
     * hint of a broker from before hints carried it).
     */
    void pushed(String queue, String partition, int count, long bytes);

    /**
     * {@code lease}: the lease that ended, null when the acks named none or the sender is older.
     */
    void released(String queue, String partition, String group, boolean hasMore, UUID lease);

    /** Switches, queue settings or consumer groups changed: read the shared state again. */
    void refresh();

    /** Hints may have been missed while the listener was away. */
    void reconnected();
  }

  private final Notifications notifications;
  private final boolean enabled;
  private final MeterRegistry meters;
  private final int maxUnapplied;
  private final String self = UUID.randomUUID().toString();
  private final ReentrantLock lock = new ReentrantLock();
  private final Condition noted = lock.newCondition();

  /**
   * Entries to send, in the order first noted; a push entry's value sums the messages and bytes of
   * the pushes folded into it (a peer's minimum pop wait counts them), the others' is null.
   */
  private LinkedHashMap<String, long[]> pending = new LinkedHashMap<>();

  private final AtomicLong sent = new AtomicLong();
  private final AtomicLong notifies = new AtomicLong();
  private final AtomicLong coalesced = new AtomicLong();
  private final AtomicLong dropped = new AtomicLong();
  private final AtomicLong received = new AtomicLong();
  private final AtomicLong reconnects = new AtomicLong();
  private final AtomicLong alone = new AtomicLong();
  private volatile long checkedAt = System.nanoTime() - TimeUnit.SECONDS.toNanos(2);
  private volatile boolean others;
  private volatile boolean closed;

  /** The backend of our listening session, 0 while there is none. */
  private volatile int listening;

  private Thread sender;
  private Thread listener;
  private Applier applier;

  /** {@code enabled} false (QUEEN_HINTS): nothing is sent or heard, the floor serves alone. */
  public Hints(Notifications notifications, boolean enabled, MeterRegistry meters) {
    this(notifications, enabled, meters, MAX_UNAPPLIED);
  }

  Hints(Notifications notifications, boolean enabled, MeterRegistry meters, int maxUnapplied) {
    this.notifications = notifications;
    this.enabled = enabled;
    this.meters = meters;
    this.maxUnapplied = maxUnapplied;
    counter(meters, "queen_hints_sent", sent, "hint entries sent to other brokers");
    counter(meters, "queen_hints_notifies", notifies, "NOTIFYs carrying them");
    counter(meters, "queen_hints_coalesced", coalesced, "entries folded into one already pending");
    counter(meters, "queen_hints_dropped", dropped, "entries lost (queue full or send failed)");
    counter(meters, "queen_hints_received", received, "entries received from other brokers");
    counter(meters, "queen_hints_listener_reconnects", reconnects, "listener reconnections");
    counter(meters, "queen_hints_unsent_alone", alone, "entries not sent: no other broker listens");
  }

  private static void counter(MeterRegistry m, String name, AtomicLong v, String description) {
    FunctionCounter.builder(name, v, AtomicLong::get).description(description).register(m);
  }

  /** A partition received {@code count} messages of {@code bytes} payload bytes through us. */
  public void pushed(String queue, String partition, int count, long bytes) {
    note("p\t" + queue + "\t" + partition, new long[] {count, bytes});
  }

  /**
   * A lease ended through this broker; {@code hasMore}: the partition is ready again. The lease,
   * when known, goes on a line "e" of its own after it: a broker from before it reads the "l" line
   * as it always did and passes the "e" line by as a hint it does not know.
   */
  public void released(String queue, String partition, String group, boolean hasMore, UUID lease) {
    String entry = "l\t" + queue + "\t" + partition + "\t" + group + "\t" + (hasMore ? "1" : "0");
    note(lease == null ? entry : entry + "\ne\t" + lease, null);
  }

  /**
   * Shared state changed through this broker (configure, a switch, a group seek or delete, a
   * payload key registered).
   */
  public void refresh() {
    note("r", null);
  }

  // names never hold control characters (the HTTP layer refuses them), so tab and newline separate
  private void note(String entry, long[] amount) {
    if (closed || !enabled) {
      return;
    }
    lock.lock();
    try {
      long[] folded = pending.get(entry);
      if (folded != null || pending.containsKey(entry)) {
        if (folded != null) {
          folded[0] += amount[0];
          folded[1] += amount[1];
        }
        coalesced.incrementAndGet();
        return;
      }
      if (pending.size() >= MAX_PENDING) {
        dropped.incrementAndGet();
        return;
      }
      pending.put(entry, amount);
      if (pending.size() == 1) {
        noted.signal();
      }
    } finally {
      lock.unlock();
    }
  }

  /** Starts sending, and listening for the others' hints. */
  public synchronized void start(Receiver receiver) {
    if (sender == null && enabled) {
      Applier a = new Applier(maxUnapplied, receiver::reconnected);
      Gauge.builder("queen_hints_unapplied", a, Applier::behind)
          .description("hints heard from other brokers and not yet applied")
          .register(meters);
      FunctionCounter.builder("queen_hints_apply_overruns", a, Applier::overruns)
          .description("times unapplied hints were dropped for a state read and a wake of all")
          .register(meters);
      applier = a;
      sender = Thread.ofPlatform().daemon().name("queen-hints-send").start(this::sendLoop);
      listener =
          Thread.ofPlatform()
              .daemon()
              .name("queen-hints-listen")
              .start(() -> listenLoop(receiver, a));
    }
  }

  private void sendLoop() {
    while (!closed) {
      List<String> batch;
      lock.lock();
      try {
        while (pending.isEmpty() && !closed) {
          noted.await();
        }
      } catch (InterruptedException e) {
        return;
      } finally {
        lock.unlock();
      }
      LockSupport.parkNanos(GATHER_NANOS); // let the notes of concurrent pushes gather
      lock.lock();
      try {
        List<String> taken = new ArrayList<>(pending.size());
        if (pending.containsKey("r")) {
          pending.remove("r");
          taken.add("r"); // first, so it reaches the others before the pushes that follow it
        }
        // a push's amounts go on a line of their own after it: a broker from before them reads
        // the "p" line as it always did and passes the "a" line by as a hint it does not know
        pending.forEach(
            (entry, amount) ->
                taken.add(amount == null ? entry : entry + "\na\t" + amount[0] + "\t" + amount[1]));
        pending = new LinkedHashMap<>();
        batch = taken;
      } finally {
        lock.unlock();
      }
      if (!othersListening()) {
        alone.addAndGet(batch.size());
        continue; // a broker alone sends nothing: no NOTIFY cost, no listener work in PostgreSQL
      }
      List<String> payloads = payloads(batch);
      try {
        notifications.send(CHANNEL, payloads);
        sent.addAndGet(batch.size());
        notifies.addAndGet(payloads.size());
      } catch (StoreException e) {
        dropped.addAndGet(batch.size()); // the floor covers them: backoff and state refresh
      } catch (RuntimeException e) {
        // any other failure ended this thread, and with it every hint until a restart
        dropped.addAndGet(batch.size());
        log.warn("hints not sent: {}", e.toString());
      }
    }
  }

  /**
   * Whether another broker listens: asked again after a second when one did, after a quarter of a
   * second when none did (a broker that starts is heard from soon), and known at once when one of
   * its hints arrives.
   */
  private boolean othersListening() {
    long now = System.nanoTime();
    if (now - checkedAt > TimeUnit.MILLISECONDS.toNanos(others ? 1_000 : 250)) {
      try {
        // our own listener not counted by its pid: while it is away, others still hear us
        others = notifications.sessions(Notifications.LISTENER_NAME, listening) > 0;
      } catch (StoreException e) {
        others = true; // when in doubt, send: a failed send only drops hints
      }
      checkedAt = now;
    }
    return others;
  }

  /**
   * The entries as payloads of at most {@link Notifications#MAX_PAYLOAD} bytes, each headed by us.
   */
  private List<String> payloads(List<String> entries) {
    List<String> out = new ArrayList<>();
    StringBuilder b = new StringBuilder(self);
    int bytes = self.length();
    for (String e : entries) {
      int size = 1 + e.getBytes(StandardCharsets.UTF_8).length;
      if (bytes + size > Notifications.MAX_PAYLOAD && bytes > self.length()) {
        out.add(b.toString());
        b = new StringBuilder(self);
        bytes = self.length();
      }
      b.append('\n').append(e);
      bytes += size;
    }
    if (bytes > self.length()) {
      out.add(b.toString());
    }
    return out;
  }

  /** Reads hints and hands them, in order, to the applier: this thread never waits on the pool. */
  private void listenLoop(Receiver receiver, Applier applier) {
    long backoffMs = 100;
    boolean first = true;
    while (!closed) {
      try (Notifications.Listener l = notifications.listen(CHANNEL)) {
        listening = l.pid();
        if (!first) {
          reconnects.incrementAndGet();
          log.info("hint listener connected again");
          applier.offer(receiver::reconnected);
        }
        first = false;
        backoffMs = 100;
        while (!closed) {
          for (String payload : l.poll(500)) {
            applier.offer(() -> heard(payload, receiver));
          }
        }
      } catch (StoreException e) {
        listening = 0;
        if (backoffMs == 100) {
          // once per outage: meanwhile pops here wake by their backoff, up to a second late
          log.warn("hint listener lost, reconnecting: {}", e.getMessage());
        } else {
          log.debug("hint listener still away: {}", e.getMessage());
        }
        first = false;
        LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(backoffMs));
        backoffMs = Math.min(backoffMs * 2, 5_000);
      } catch (RuntimeException e) {
        listening = 0;
        log.warn("hint listener failed, reconnecting: {}", e.getMessage());
        first = false;
        LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(backoffMs));
        backoffMs = Math.min(backoffMs * 2, 5_000); // a failure that repeats is not retried hot
      }
    }
  }

  private void heard(String payload, Receiver receiver) {
    if (payload.startsWith(self)) {
      return; // our own
    }
    others = true;
    received.addAndGet(HintLines.apply(payload, receiver));
  }

  @Override
  public void close() {
    closed = true;
    lock.lock();
    try {
      noted.signalAll();
    } finally {
      lock.unlock();
    }
    Thread s;
    Thread l;
    Applier a;
    synchronized (this) {
      s = sender;
      l = listener;
      a = applier;
    }
    for (Thread t : new Thread[] {s, l}) {
      if (t != null) {
        t.interrupt();
        try {
          t.join(2_000);
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
        }
      }
    }
    if (a != null) {
      a.close();
    }
  }
}
