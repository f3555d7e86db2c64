package queen.server.push;

import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.MeterRegistry;
import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import queen.server.store.PartitionMissingException;
import queen.server.store.StoreException;

/**
 * Pushes that never need refusing: while push maintenance is on, and (with failover) while
 * PostgreSQL cannot be reached, a push goes to the {@link LocalBuffer} and is answered {@code
 * buffered}; a drainer feeds the buffer back through the normal push path, oldest first, once
 * maintenance is off and the database answers. TransactionIds are assigned before an item is
 * buffered, so a drain repeated after a crash stores every message once (the push's dedup). While
 * buffered messages wait, every push joins them in the buffer, so none overtakes them.
 */
public final class BufferedPush implements AutoCloseable {
  private static final Logger log = LoggerFactory.getLogger(BufferedPush.class);

  private static final long IDLE_CHECK_MS = 500;
  private static final long REOPEN_NANOS = TimeUnit.SECONDS.toNanos(2);

  private final PushService direct;
  private final PayloadSealing sealing;
  private final BufferDrain drain;

  /** Null while FILE_BUFFER_DIR cannot be used (see {@link #reopen}); never closed and reopened. */
  private volatile LocalBuffer buffer;

  private volatile String bufferProblem;

  /**
   * The buffer directory's lock is held and the directory holds files of an earlier run: a restart
   * that overlapped the shutdown of the broker before it. Not for other failures to open it (then
   * pushes go straight to the database, as when a drain is stuck).
   */
  private volatile boolean earlierFiles;

  private final Path dir;
  private final long maxBytes;
  private long reopenedAt = System.nanoTime();
  private final boolean failover;
  private final ReentrantLock lock = new ReentrantLock();
  private final Condition work = lock.newCondition();
  private Thread drainer;
  private volatile boolean maintenance;
  private volatile boolean dbHealthy = true;

  /**
   * The database's refusal of the drain last logged (the drainer's alone), until a drain passes.
   */
  private String drainRefused;

  private volatile boolean drainProgressing = true;
  private volatile boolean closed;

  /**
   * @param dir FILE_BUFFER_DIR; when it cannot be opened the broker still starts, and every push
   *     that would be buffered is a 503 naming the problem
   * @param failover QUEEN_PUSH_FAILOVER: buffer pushes that cannot reach PostgreSQL
   */
  public BufferedPush(
      PushService direct, PayloadSealing sealing, Path dir, long maxBytes, boolean failover) {
    this.direct = direct;
    this.sealing = sealing;
    this.drain = new BufferDrain(direct, sealing, () -> maintenance || closed);
    this.failover = failover;
    this.dir = dir;
    this.maxBytes = maxBytes;
    try {
      buffer = LocalBuffer.open(dir, maxBytes);
    } catch (IOException | RuntimeException e) {
      bufferProblem = "FILE_BUFFER_DIR " + dir + " cannot be used: " + e.getMessage();
      earlierFiles = e instanceof BufferInUse && BufferFiles.any(dir);
      log.warn("{}; pushes in maintenance mode or failover will be refused", bufferProblem);
    }
  }

  /**
   * Tries the buffer directory again, every {@link #REOPEN_NANOS}: a broker started while the one
   * before still held it (a restart that overlapped its shutdown) ran its whole life without a
   * buffer, and the files of the one before stayed undrained until another restart.
   */
  private void reopen() {
    long now = System.nanoTime();
    if (now - reopenedAt < REOPEN_NANOS) {
      return;
    }
    reopenedAt = now;
    try {
      buffer = LocalBuffer.open(dir, maxBytes);
      bufferProblem = null;
      earlierFiles = false;
      log.info("FILE_BUFFER_DIR {} is usable now: pushes can be buffered", dir);
    } catch (IOException | RuntimeException e) {
      bufferProblem = "FILE_BUFFER_DIR " + dir + " cannot be used: " + e.getMessage();
      earlierFiles = e instanceof BufferInUse && BufferFiles.any(dir);
    }
  }

  /** Starts draining; call once the maintenance switch has been read. */
  public synchronized void start() {
    if (drainer == null) {
      drainer = Thread.ofPlatform().daemon().name("queen-buffer-drain").start(this::drainLoop);
    }
  }

  /** Push maintenance, the cluster-wide switch: on buffers every push; off starts the drain. */
  public void maintenance(boolean on) {
    boolean was = maintenance;
    maintenance = on;
    if (was && !on) {
      wake();
    }
  }

  public List<PushResult> push(List<PushItem> items) {
    if (items.isEmpty()) {
      return List.of();
    }
    if (maintenance || (failover && !dbHealthy)) {
      // while the database is known to be away, do not make every push wait for the pool's
      // connection timeout: the drainer finds out when it is back
      try {
        return buffer(items);
      } catch (BufferUnavailableException e) {
        if (!maintenance) {
          // no buffer to drain, so no drainer finds out: the next push asks the database again
          dbHealthy = true;
        }
        throw e;
      }
    }
    if (buffer == null && earlierFiles) {
      // straight to the database, a push overtook the buffered ones of its partition, which were
      // answered before it and drain once the directory opens
      throw new BufferUnavailableException(
          "Buffered pushes of an earlier run wait in FILE_BUFFER_DIR, which cannot be opened yet ("
              + bufferProblem
              + "), retry");
    }
    if (behindBuffer()) {
      if (!dbHealthy && !failover) {
        // not buffered for an outage without failover; nor straight to the database, which may
        // be back before the drain finds out: the push would overtake its partition's buffered ones
        throw new BufferUnavailableException(
            "Buffered pushes are waiting for the database to take them, retry");
      }
      List<PushResult> results = buffer(items);
      wake();
      return results;
    }
    // with failover, the ids are given before the attempt, so that a push whose commit went
    // unanswered (the connection lost after it) is buffered under the same ones: the drain then
    // finds them stored, where fresh ones stored its messages twice
    List<PushItem> keyed = failover ? direct.withTransactionIds(items) : items;
    try {
      List<PushResult> results = direct.push(keyed);
      if (!dbHealthy) {
        dbHealthy = true; // written only on a change: every push reads it, none writes it
      }
      return results;
    } catch (StoreException e) {
      if (!failover || !e.unavailable()) {
        throw e;
      }
      if (dbHealthy) {
        log.warn("failover: pushes go to the local buffer until the database is back");
      }
      dbHealthy = false;
      List<PushResult> results = buffer(keyed);
      wake();
      return results;
    }
  }

  /**
   * Whether a push straight to PostgreSQL would overtake the buffered messages of its partition.
   * Not when the drain is stuck (its file unreadable): then a push answers as without a buffer.
   */
  private boolean behindBuffer() {
    return buffer != null && buffer.pending() > 0 && drainProgressing;
  }

  private List<PushResult> buffer(List<PushItem> items) {
    if (buffer == null) {
      throw new BufferUnavailableException(bufferProblem);
    }
    List<PushItem> keyed = direct.withTransactionIds(items);
    try {
      buffer.append(BufferRecord.encode(keyed, sealing), keyed.size());
    } catch (IOException e) {
      log.warn("local buffer write failed: {}", e.getMessage());
      throw new BufferUnavailableException("the local buffer cannot be written: " + e.getMessage());
    }
    List<PushResult> out = new ArrayList<>(keyed.size());
    for (PushItem i : keyed) {
      out.add(
          new PushResult(
              PushResult.Status.BUFFERED, i.transactionId(), null, null, i.traceId(), i.queue()));
    }
    return out;
  }

  /** What {@code GET /api/v1/status/buffers} and the maintenance routes report. */
  public record Status(
      long pending,
      long failedWrites,
      long failedRecords,
      long drained,
      boolean dbHealthy,
      boolean healthy) {
    /** Pushes that could not be buffered, and buffered messages set aside. */
    public long failed() {
      return failedWrites + failedRecords;
    }
  }

  /** Files set aside because the database refused them: count and bytes. */
  public long[] quarantined() throws IOException {
    return buffer == null ? new long[2] : buffer.quarantined();
  }

  public Status status() {
    return new Status(
        buffer == null ? 0 : buffer.pending(),
        buffer == null ? 0 : buffer.failedWrites(),
        drain.failedRecords(),
        drain.drained(),
        dbHealthy,
        buffer != null);
  }

  /** The buffer's gauges and counters: waiting to drain, drained, failed. */
  public void register(MeterRegistry meters) {
    meters.gauge("queen_buffer_pending_messages", this, b -> b.status().pending());
    FunctionCounter.builder("queen_buffer_drained_messages", this, b -> b.status().drained())
        .register(meters);
    FunctionCounter.builder("queen_buffer_failed", this, b -> b.status().failed())
        .description("pushes that could not be buffered, and buffered messages set aside")
        .register(meters);
  }

  private void wake() {
    lock.lock();
    try {
      work.signalAll();
    } finally {
      lock.unlock();
    }
  }

  private void drainLoop() {
    boolean again = false;
    while (!closed) {
      if (!again) {
        lock.lock();
        try {
          work.await(IDLE_CHECK_MS, TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
          return;
        } finally {
          lock.unlock();
        }
      }
      again = false;
      if (buffer == null) {
        reopen();
      }
      if (maintenance || buffer == null) {
        continue;
      }
      try {
        buffer.adoptSealed();
        if (buffer.pending() == 0 && !drain.removalsWait()) {
          continue;
        }
        long before = drain.drained();
        drain.drain(buffer);
        drainProgressing = true;
        // pushes queued behind the drain meanwhile: take them at once, not after a pause
        again = drain.drained() > before && buffer.pending() > 0;
        if (!dbHealthy) {
          log.info("database reachable again: local buffer drained");
        }
        dbHealthy = true;
        drainRefused = null;
      } catch (StoreException e) {
        if (!e.outage() && !Objects.equals(drainRefused, e.getMessage())) {
          drainRefused = e.getMessage(); // the database logs outages; this once per cause
          log.warn("local buffer drain refused by the database, retrying: {}", drainRefused);
        }
        dbHealthy = false; // the database cannot take the drain now: the drain kept every file
      } catch (PartitionMissingException e) {
        // partitions removed (a queue deleted) again and again while a batch prepared: not a
        // stuck drain, whose pushes would go straight to the database ahead of the buffered ones
        log.info("local buffer drain met partitions removed meanwhile, retrying");
      } catch (IOException | RuntimeException e) {
        drainProgressing = false; // pushes stop queueing behind it until a drain succeeds
        log.warn("local buffer drain failed, retrying: {}", e.getMessage());
      }
    }
  }

  @Override
  public void close() throws IOException {
    closed = true;
    Thread t;
    synchronized (this) {
      t = drainer;
    }
    if (t != null) {
      t.interrupt();
      try {
        t.join(5_000);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    }
    if (buffer != null) {
      buffer.close();
    }
  }
}
