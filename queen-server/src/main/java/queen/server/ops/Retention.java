package queen.server.ops;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import java.time.Duration;
import java.time.Instant;
import java.time.InstantSource;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import java.util.function.ObjLongConsumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import queen.server.store.RetentionStore;
import queen.server.store.StoreException;

/**
 * Keeps storage bounded: every interval, deletes the segments that their queue's retention has
 * expired (retentionSeconds: older than that; completedRetentionSeconds: older than that and
 * committed by every group reading the partition), oldest first, and the dead letters older than
 * retentionSeconds. The transactionId index entries of a deleted segment go with it, so a queue's
 * dedup window is its retention window.
 *
 * <p>Deletes run in batches of at most {@code batchSegments} segments and {@code batchBytes} (at
 * least one segment) of up to {@link #PAGE} partitions, each its own short transaction: a push to
 * one of them waits for one batch at most, a pop never waits. Several brokers on one database run
 * one cycle per interval between them (a claim in the database), and never take one partition at
 * once (a try-lock). When nothing else vacuums (the server's autovacuum is off), every cycle ends
 * with a VACUUM of the broker's tables: it makes the space of deleted rows reusable, and without it
 * the busiest tables slow down (measured: pushes at a third of their speed after ten minutes).
 * Before that, it dates the cursors that lack the date of their committed message (moved last
 * before V17, or placed at first contact), which the list of completed messages orders partitions
 * by. A failed cycle (database down) is logged and tried again at the next tick.
 */
public final class Retention implements AutoCloseable {
  private static final Logger log = LoggerFactory.getLogger(Retention.class);

  /**
   * Cursors dated per transaction by a cycle: each holds their rows until it commits, and an ack or
   * seek of one of them waits for that (a pop skips it for the moment).
   */
  static final int CURSOR_DATES = 100;

  /**
   * Partitions whose segments one transaction may delete, within RETENTION_BATCH_SIZE segments and
   * RETENTION_BATCH_MB in all: a transaction per partition kept retention from keeping up with a
   * partition per push.
   */
  static final int PAGE = 100;

  /** When a cycle vacuums: AUTO when the server's autovacuum is off, or always, or never. */
  public enum Vacuum {
    AUTO,
    ON,
    OFF
  }

  /**
   * @param interval RETENTION_INTERVAL, time between cycles
   * @param batchSegments RETENTION_BATCH_SIZE, segments (or dead letters) per delete transaction
   * @param batchBytes RETENTION_BATCH_MB, segment bytes per delete transaction (at least one
   *     segment)
   * @param vacuum RETENTION_VACUUM
   * @param partitionIdle PARTITION_CLEANUP_DAYS, how long a partition that retains no message must
   *     go without a push, pop or ack to be removed with its cursors; zero never
   */
  public record Settings(
      Duration interval,
      int batchSegments,
      long batchBytes,
      Vacuum vacuum,
      Duration partitionIdle) {}

  /** What one cycle deleted. */
  public record Report(long segments, long messages, long bytes, long deadLetters) {
    static final Report NOTHING = new Report(0, 0, 0, 0);

    Report plus(Report o) {
      return new Report(
          segments + o.segments,
          messages + o.messages,
          bytes + o.bytes,
          deadLetters + o.deadLetters);
    }

    boolean deletedAnything() {
      return segments + deadLetters > 0;
    }
  }

  private final RetentionStore store;
  private final Settings settings;
  private final InstantSource clock;
  private final MeterRegistry meters;
  private final Timer runs;
  private final ObjLongConsumer<String> deleted;
  private final PartitionCleanup inactive;
  private volatile boolean closed;
  private ScheduledExecutorService timer;

  /** {@code deleted} hears the messages each cycle deleted per queue (the analytics series). */
  public Retention(
      RetentionStore store,
      Settings settings,
      InstantSource clock,
      MeterRegistry meters,
      ObjLongConsumer<String> deleted) {
    this.deleted = deleted;
    this.inactive = new PartitionCleanup(store, settings.partitionIdle(), meters);
    this.store = store;
    this.settings = settings;
    this.clock = clock;
    this.meters = meters;
    this.runs =
        Timer.builder("queen_retention_run")
            .description("Retention cycles run by this broker")
            .register(meters);
  }

  public synchronized void start() {
    if (timer == null && !closed) {
      timer = Periodic.every("queen-retention", settings.interval(), this::tick);
    }
  }

  private void tick() {
    try {
      if (store.claim(settings.interval().toMillis())) {
        runOnce();
      }
    } catch (RuntimeException e) {
      Periodic.failed(log, "retention cycle failed", settings.interval(), e);
    }
  }

  /** One cycle now, whatever other brokers did; what it deleted. */
  public Report runOnce() {
    long started = System.nanoTime();
    Instant now = clock.instant();
    Report total = Report.NOTHING;
    Set<String> queues = new HashSet<>();
    for (RetentionStore.RetentionQueue q : store.queues()) {
      if (closed) {
        break;
      }
      queues.add(q.name());
      Report[] done = {Report.NOTHING};
      try {
        queue(q, now, page -> done[0] = done[0].plus(page));
      } catch (StoreException e) {
        if (endsCycle(e)) {
          throw e;
        }
        // one queue's failure that repeats (its data, a timeout on its partitions) stopped every
        // queue after it in name order, the cleanup of inactive partitions and the VACUUM at
        // every cycle, and storage grew with one line of log per cycle
        log.warn("retention of queue {} failed, the cycle goes on: {}", q.name(), e.getMessage());
      } finally {
        total = total.plus(done[0]);
      }
    }
    if (!closed) {
      forgetCountersBut(queues);
    }
    // after the segments' deletes: a partition they emptied may go in the same cycle
    long removed = inactive.run(now, () -> closed);
    dateCursors();
    if (!closed && vacuumWanted()) {
      store.vacuum();
    }
    long took = System.nanoTime() - started;
    runs.record(took, TimeUnit.NANOSECONDS);
    if (total.deletedAnything() || removed > 0) {
      log.info(
          "retention deleted {} segments ({} messages, {} bytes) and {} dead letters, and removed"
              + " {} inactive partitions in {} ms",
          total.segments(),
          total.messages(),
          total.bytes(),
          total.deadLetters(),
          removed,
          TimeUnit.NANOSECONDS.toMillis(took));
    }
    return total;
  }

  /** Dates the cursors without one, in key order, a transaction per chunk; never stops a cycle. */
  private void dateCursors() {
    try {
      RetentionStore.DatedCursors pass = new RetentionStore.DatedCursors(0, null, null);
      do {
        pass = store.dateCursors(pass.lastPartition(), pass.lastGroup(), CURSOR_DATES);
      } while (pass.examined() == CURSOR_DATES && !closed);
    } catch (RuntimeException e) {
      log.warn("dating cursors failed, the cycle goes on: {}", e.getMessage());
    }
  }

  /**
   * Away, read-only (a demoted primary) or out of resources: every page after it would fail alike,
   * so the cycle ends, logged once. Any other failure is one queue's or one page's.
   */
  private static boolean endsCycle(StoreException e) {
    return e.unavailable() && !e.conflict();
  }

  /**
   * One queue's expired segments, a page of partitions a transaction, then its expired dead
   * letters; each committed page counted at once and handed to {@code done}. A page that fails (not
   * {@link #endsCycle}) is tried again a partition at a time, and the partition that fails is
   * passed over, logged: one failing at every cycle left the rest of its queue and the queue's dead
   * letters to grow, and what the pages before it deleted uncounted.
   */
  private void queue(RetentionStore.RetentionQueue q, Instant now, Consumer<Report> done) {
    Instant byTime = cutoff(now, q.retentionSeconds());
    Instant byCompletion = cutoff(now, q.completedRetentionSeconds());
    Instant loosest =
        byTime == null || (byCompletion != null && byCompletion.isAfter(byTime))
            ? byCompletion
            : byTime;
    List<UUID> candidates = store.candidates(q.id(), loosest);
    int next = 0;
    // after a page failed: its partitions one at a time, so that only the failing one is passed
    int singlyUntil = 0;
    while (next < candidates.size() && !closed) {
      int width = next < singlyUntil ? 1 : PAGE;
      List<UUID> page = candidates.subList(next, Math.min(next + width, candidates.size()));
      try {
        RetentionStore.Deleted d =
            store.delete(page, now, settings.batchSegments(), settings.batchBytes());
        counted(q.name(), new Report(d.segments(), d.messages(), d.bytes(), 0), done);
        next += d.done();
      } catch (StoreException e) {
        if (endsCycle(e)) {
          throw e;
        }
        if (page.size() > 1) {
          singlyUntil = next + page.size();
          continue;
        }
        log.warn(
            "retention of queue {} passed over partition {}, the cycle goes on: {}",
            q.name(),
            page.getFirst(),
            e.getMessage());
        next++;
      }
    }
    if (byTime != null) {
      RetentionStore.DeletedDeadLetters d = new RetentionStore.DeletedDeadLetters(0, null);
      do {
        d = store.deleteDeadLetters(q.id(), now, d.after(), settings.batchSegments());
        counted(q.name(), new Report(0, 0, 0, d.deleted()), done);
      } while (d.deleted() == settings.batchSegments() && !closed);
    }
  }

  private void counted(String queue, Report page, Consumer<Report> done) {
    count(queue, page);
    done.accept(page);
  }

  private static Instant cutoff(Instant now, int seconds) {
    return seconds > 0 ? now.minusSeconds(seconds) : null;
  }

  private boolean vacuumWanted() {
    return switch (settings.vacuum()) {
      case ON -> true;
      case OFF -> false;
      case AUTO -> store.autovacuumOff();
    };
  }

  private void count(String queue, Report done) {
    if (done.segments() > 0) {
      deleted.accept(queue, done.messages());
      counter("queen_retention_deleted_segments", "Segments deleted by retention", queue)
          .increment(done.segments());
      counter("queen_retention_deleted_messages", "Messages deleted by retention", queue)
          .increment(done.messages());
      counter("queen_retention_deleted_bytes", "Segment bytes deleted by retention", queue)
          .increment(done.bytes());
    }
    if (done.deadLetters() > 0) {
      counter("queen_retention_deleted_dead_letters", "Dead letters deleted by retention", queue)
          .increment(done.deadLetters());
    }
  }

  /**
   * Removes the counters of queues that are gone or keep nothing back any more: a broker that saw
   * queues come and go (one per job, say) kept four series of each for good.
   */
  private void forgetCountersBut(Set<String> queues) {
    for (Meter m : meters.getMeters()) {
      Meter.Id id = m.getId();
      if (id.getName().startsWith("queen_retention_deleted_")
          && !queues.contains(id.getTag("queue"))) {
        meters.remove(m);
      }
    }
  }

  private Counter counter(String name, String description, String queue) {
    return Counter.builder(name).description(description).tag("queue", queue).register(meters);
  }

  /** Stops the timer; a cycle in progress stops after its current batch. Idempotent. */
  @Override
  public synchronized void close() {
    closed = true;
    timer = Periodic.stop(timer);
  }
}
