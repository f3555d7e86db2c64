package queen.server.ops;

import java.time.Duration;
import java.time.Instant;
import java.time.InstantSource;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.Executor;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import queen.server.store.ConsumerGroupStore;
import queen.server.store.ConsumerGroupStore.Lagging;

/**
 * The most lagging cursors of every group (at most {@link #CAPACITY}, oldest unconsumed message
 * first), as of a snapshot at most about one statistics interval old. Finding a cursor's oldest
 * unconsumed message costs a probe into its segments; with 10,000 lagging cursors that was 0.3 s
 * per request under load, for a view a dashboard polls. The snapshot is taken when asked for and
 * refreshed ahead: a request that finds it older than the interval is answered from it while a new
 * one is taken in the background, and waits only when there is none or it is older than two
 * intervals. A group reset through this broker drops it, so the next request sees the new cursors.
 */
public final class LagSnapshot {
  /** Rows kept: the oldest first, which is what the lagging view shows first. */
  public static final int CAPACITY = 10_000;

  private static final Logger log = LoggerFactory.getLogger(LagSnapshot.class);

  private record Cursor(String group, UUID partitionId) {}

  private record Snapshot(Instant takenAt, List<Lagging> rows, Map<Cursor, Instant> oldest) {
    static Snapshot of(Instant takenAt, List<Lagging> rows) {
      Map<Cursor, Instant> oldest = HashMap.newHashMap(rows.size());
      for (Lagging l : rows) {
        oldest.put(new Cursor(l.group(), l.partitionId()), l.oldestUnconsumedAt());
      }
      return new Snapshot(takenAt, rows, oldest);
    }
  }

  private final ConsumerGroupStore store;
  private final Duration interval;
  private final InstantSource clock;
  private final Executor background = r -> Thread.ofVirtual().name("lag-snapshot").start(r);
  private volatile Snapshot current;
  // when a detail last found no snapshot, and when a snapshot last failed
  private volatile Instant unansweredAt;
  private volatile Instant failedAt;
  private CompletableFuture<Snapshot> taking;
  // a snapshot begun before a forget() is not kept
  private long generation;
  private long takingGeneration;

  public LagSnapshot(ConsumerGroupStore store, Duration interval, InstantSource clock) {
    this.store = store;
    this.interval = interval;
    this.clock = clock;
  }

  /**
   * The first {@code limit} cursors whose oldest unconsumed message is at least {@code minSeconds}
   * old at the snapshot, oldest first, with their time lag counted to now.
   */
  public List<Lagging> lagging(int minSeconds, int limit) {
    Instant now = clock.instant();
    Instant edge = now.minusSeconds(minSeconds);
    List<Lagging> out = new ArrayList<>();
    for (Lagging l : fresh(now).rows()) {
      if (out.size() == limit || l.oldestUnconsumedAt().isAfter(edge)) {
        break;
      }
      out.add(
          new Lagging(
              l.group(),
              l.queue(),
              l.partition(),
              l.partitionId(),
              l.workerId(),
              l.offsetLag(),
              Math.max(0, Duration.between(l.oldestUnconsumedAt(), now).toSeconds()),
              l.oldestUnconsumedAt(),
              l.lastConsumedAt()));
    }
    return out;
  }

  /**
   * The oldest unconsumed message of the cursors the snapshot holds, for a group's detail, which
   * probes the others: a cursor that consumed since the snapshot shows a time lag up to two
   * intervals too old, one that began to lag since is not held. Never waits: with no snapshot
   * younger than two intervals it knows nothing, and an older one is refreshed in the background.
   * With none, a detail asked again within two intervals (a dashboard polling it) has one taken in
   * the background for the next ones: a page of 1,000 lagging cursors probed each took 50 ms, 22
   * from a snapshot, until the lagging view took one. Not for a detail asked once, which would
   * never use it, nor within an interval of a snapshot that failed.
   */
  public ConsumerGroupStore.KnownOldest knownOldest() {
    Instant now = clock.instant();
    Snapshot s = recent(now);
    if (s == null) {
      Instant before = unansweredAt;
      unansweredAt = now;
      Instant failed = failedAt;
      if (before != null
          && before.isAfter(now.minus(interval.multipliedBy(2)))
          && (failed == null || failed.isBefore(now.minus(interval)))) {
        take();
      }
      return (group, partitionId) -> null;
    }
    return (group, partitionId) -> s.oldest().get(new Cursor(group, partitionId));
  }

  /** Drops the snapshot: a group's cursors moved (a seek or a delete). */
  public synchronized void forget() {
    generation++;
    current = null;
  }

  /** The snapshot, or one taken now when there is none younger than two intervals. */
  private Snapshot fresh(Instant now) {
    Snapshot s = recent(now);
    if (s == null) {
      try {
        return take().join();
      } catch (CompletionException e) {
        throw e.getCause() instanceof RuntimeException r ? r : e;
      }
    }
    return s;
  }

  /**
   * The snapshot if it is younger than two intervals, null if not; one older than an interval is
   * refreshed in the background meanwhile.
   */
  private Snapshot recent(Instant now) {
    Snapshot s = current;
    if (s == null || s.takenAt().isBefore(now.minus(interval.multipliedBy(2)))) {
      return null;
    }
    if (s.takenAt().isBefore(now.minus(interval))) {
      take();
    }
    return s;
  }

  /** The snapshot being taken, started if none is: one at a time per broker. */
  private synchronized CompletableFuture<Snapshot> take() {
    // done, not null: a snapshot finished before whenComplete was attached runs taken() here;
    // and one begun before a forget() is not what a request after it should wait for
    if (taking == null || taking.isDone() || takingGeneration != generation) {
      Instant at = clock.instant();
      long begun = generation;
      takingGeneration = begun;
      taking =
          CompletableFuture.supplyAsync(
                  () -> Snapshot.of(at, store.lagging(0, CAPACITY)), background)
              .whenComplete((s, failure) -> taken(begun, s, failure));
    }
    return taking;
  }

  private synchronized void taken(long begun, Snapshot s, Throwable failure) {
    if (failure == null) {
      if (begun == generation) {
        current = s;
      }
    } else {
      // the request that waits for it reports the failure; one refreshing ahead keeps the old
      failedAt = clock.instant();
      log.debug("lag snapshot failed", failure);
    }
  }
}
