package queen.server.pop;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.Iterator;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import queen.server.store.Verdict;

/**
 * The ring of one (queue, consumer group): partitions believed to have messages the group can take,
 * so that a pop asks PostgreSQL only about those and an idle consumer costs the database nothing.
 *
 * <p>A partition a pop has taken is in flight until its verdict is checked back; meanwhile other
 * pops of this broker do not take it. Every add (push, ack-promote, revisit, reseed) bumps a
 * version: a verdict checked back against an older version (the claim may have run before that push
 * committed) keeps the partition ready instead of dropping it, so a push racing a claim is never
 * lost. Periodic reseeding from SQL repairs anything else (another broker's push, a lease that
 * expired): a lost hint costs at most one reseed interval.
 */
final class HotList {
  /** A candidate handed to a pop, with the version it had when taken. */
  record Taken(String partition, long version) {}

  private final LinkedHashSet<String> ready = new LinkedHashSet<>();
  private final Map<String, Long> inFlight = new HashMap<>();
  private final Map<String, Long> versions = new HashMap<>();

  /** Messages pushed to each ready partition since it became ready; -1 when unknown. */
  private final Map<String, Long> pushed = new HashMap<>();

  private long clock;
  private long firstReadyNanos;
  private long lastReseedNanos;
  private boolean reseeded;
  private boolean reseeding;
  private boolean contacted;

  /** Marks a partition as having work; {@code count} messages, or -1 when unknown. */
  synchronized void add(String partition, long count, long nowNanos) {
    versions.put(partition, ++clock);
    pushed.merge(partition, count, (a, b) -> a < 0 || b < 0 ? -1 : a + b);
    if (!inFlight.containsKey(partition)) {
      if (ready.isEmpty()) {
        firstReadyNanos = nowNanos;
      }
      ready.add(partition);
    }
  }

  /** Hands out up to {@code k} ready partitions, oldest first, and marks them in flight. */
  synchronized List<Taken> take(int k) {
    List<Taken> out = new ArrayList<>(Math.min(k, ready.size()));
    Iterator<String> it = ready.iterator();
    while (it.hasNext() && out.size() < k) {
      String p = it.next();
      it.remove();
      long v = versions.getOrDefault(p, 0L);
      inFlight.put(p, v);
      out.add(new Taken(p, v));
    }
    return out;
  }

  /** The version a pop observes before claiming a partition it did not take (single route). */
  synchronized long version(String partition) {
    return versions.getOrDefault(partition, 0L);
  }

  /**
   * Checks a verdict back. The partition stays ready when it was added again after {@code
   * observed}, or when an autoAck delivery may have left more; otherwise it leaves the ring
   * (leased, empty, deferred and locked partitions come back through an ack, the revisit wheel or a
   * reseed).
   */
  synchronized void checkIn(
      String partition, long observed, Verdict verdict, boolean autoAck, long nowNanos) {
    inFlight.remove(partition);
    boolean newer = versions.getOrDefault(partition, 0L) > observed;
    boolean maybeMore = verdict == Verdict.DELIVERED && autoAck;
    if (verdict == Verdict.DELIVERED) {
      pushed.remove(partition);
    }
    if (newer || maybeMore) {
      if (ready.isEmpty()) {
        firstReadyNanos = nowNanos;
      }
      ready.add(partition);
      pushed.putIfAbsent(partition, -1L);
    } else {
      ready.remove(partition);
      versions.remove(partition);
      pushed.remove(partition);
    }
  }

  /** Returns candidates a pop took but never tried (it claimed enough before reaching them). */
  synchronized void giveBack(List<Taken> untried, long nowNanos) {
    for (Taken t : untried) {
      inFlight.remove(t.partition());
      if (ready.isEmpty()) {
        firstReadyNanos = nowNanos;
      }
      ready.add(t.partition());
    }
  }

  synchronized boolean hasReady() {
    return !ready.isEmpty();
  }

  synchronized boolean isReady(String partition) {
    return ready.contains(partition);
  }

  synchronized int size() {
    return ready.size() + inFlight.size();
  }

  /** True once: the caller is the one pop of this broker that routes first contact through SQL. */
  synchronized boolean firstContact() {
    if (contacted) {
      return false;
    }
    contacted = true;
    return true;
  }

  /** True when the caller should reseed now; it must then call {@link #reseeded}. */
  synchronized boolean startReseed(long nowNanos, long intervalNanos) {
    if (reseeding || (reseeded && nowNanos - lastReseedNanos < intervalNanos)) {
      return false;
    }
    reseeding = true;
    return true;
  }

  synchronized boolean reseedDue(long nowNanos, long intervalNanos) {
    return !reseeding && (!reseeded || nowNanos - lastReseedNanos >= intervalNanos);
  }

  /**
   * Ends a reseed with what SQL found. A full page means more may wait beyond it: the next pop that
   * finds the ring empty reseeds at once instead of after the interval.
   */
  synchronized void reseeded(List<String> partitions, boolean fullPage, long nowNanos) {
    reseeding = false;
    reseeded = !fullPage;
    lastReseedNanos = nowNanos;
    for (String p : partitions) {
      add(p, -1, nowNanos);
    }
  }

  /** A reseed that failed (database down): retried after the interval, not by every pop. */
  synchronized void reseedFailed(long nowNanos) {
    reseeding = false;
    reseeded = true;
    lastReseedNanos = nowNanos;
  }

  /**
   * The minimum pop wait: until when a pop for {@code batch} messages should hold back because the
   * ring's work is younger than {@code waitNanos} and, as far as pushes tell, smaller than the
   * batch. 0 means claim now.
   */
  synchronized long holdUntil(long waitNanos, int batch, long nowNanos) {
    if (ready.isEmpty()) {
      return 0;
    }
    long known = 0;
    for (String p : ready) {
      long n = pushed.getOrDefault(p, -1L);
      if (n < 0) {
        return 0; // unknown amount (reseed, ack-promote): do not hold
      }
      known += n;
    }
    long until = firstReadyNanos + waitNanos;
    return known >= batch || nowNanos >= until ? 0 : until;
  }
}
