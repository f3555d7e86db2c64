package queen.server.pop;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Iterator;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import queen.server.store.Verdict;

/**
 * The ring of one (queue, consumer group): partitions believed to have messages the group can take,
 * so that a pop asks PostgreSQL only about those and an idle consumer costs the database nothing.
 *
 * <p>A partition a pop has taken is in flight until its verdict is checked back; meanwhile other
 * pops of this broker do not take it. Every push bumps a version: a verdict checked back against an
 * older version (the claim may have run before that push committed) keeps the partition ready
 * instead of dropping it, so a push racing a claim is never lost.
 *
 * <p>A partition that is leased (by a delivery of this broker, or another worker's lease found by a
 * claim) or deferred by a visibility gate is held out of the ring: pushes to it do not make it
 * ready, since a claim would only find it locked. It comes back when its lease is released (the
 * ack-promote), when the revisit wheel fires at the known time, or when a reseed finds it takeable
 * (a lease that expired without an ack; a gate's hold waits for the wheel). Periodic reseeding from
 * SQL repairs anything else, such as another broker's push: a lost hint costs at most a reseed
 * interval and one tick of the watch.
 */
final class HotList {
  /**
   * A candidate handed to a pop, with the version it had when taken; {@code exclusive} when the pop
   * holds it in flight (a spare is only borrowed).
   */
  record Taken(String partition, long version, boolean exclusive) {}

  /** Held out until further notice: released only by an ack-promote or a reseed. */
  static final long UNTIL_RELEASED = Long.MAX_VALUE;

  private final LinkedHashSet<String> ready = new LinkedHashSet<>();
  private final Map<String, Long> inFlight = new HashMap<>();
  private final Map<String, Long> versions = new HashMap<>();

  /** Partitions held out: until when (System.nanoTime), and their version when held. */
  private final Map<String, Hold> held = new HashMap<>();

  /**
   * The version at which each partition's hold last ended (a release or an unhold): a lock verdict
   * observed before it describes a lease that is over.
   */
  private final Map<String, Long> freed = new HashMap<>();

  /**
   * {@code gate}: a visibility gate (delayedProcessing, windowBuffer) holds it, not a lease, since
   * {@code sinceNanos}.
   */
  private record Hold(long untilNanos, long version, boolean gate, long sinceNanos) {}

  /**
   * How long a reseed leaves a gate's hold alone. Its time came from the queue's options, which a
   * configure may have lowered since; a configure through any broker releases the gates at once
   * ({@link #releaseGates}), and this bounds what a lost hint costs.
   */
  static final long GATE_RECHECK_NANOS = TimeUnit.SECONDS.toNanos(30);

  private volatile long lastUsedNanos = System.nanoTime();

  /** What was pushed to each ready partition since it became ready. */
  private final Arrivals pushed = new Arrivals();

  private long clock;

  /** The clock at the last {@link #prune()}: what is older than the one before may go. */
  private long prunedAt;

  private final ReseedSchedule reseeds = new ReseedSchedule();
  private boolean contacted;

  /**
   * A push stored {@code count} messages (-1: unknown) of {@code bytes} payload bytes in a
   * partition. It becomes ready unless it is in flight (its check-in will see the newer version) or
   * held out.
   */
  synchronized void add(String partition, long count, long bytes, long nowNanos) {
    versions.put(partition, ++clock);
    pushed.add(partition, count, bytes);
    Hold hold = held.get(partition);
    if (hold != null && hold.untilNanos() > nowNanos) {
      return;
    }
    held.remove(partition);
    makeReady(partition, nowNanos);
  }

  /**
   * The partition is takeable again (its lease was released, the wheel fired, or a reseed found
   * it): ready, whatever held it out. Returns whether it became ready.
   */
  synchronized boolean release(String partition, long nowNanos) {
    versions.put(partition, ++clock);
    freed.put(partition, clock);
    pushed.unknown(partition);
    held.remove(partition);
    return makeReady(partition, nowNanos);
  }

  /**
   * A lease ended with nothing behind it: the partition is no longer held out, so the next push
   * makes it ready. Returns whether it became ready now, because a push landed while it was held
   * (after the ack looked for more).
   */
  synchronized boolean unhold(String partition, long nowNanos) {
    Hold hold = held.remove(partition);
    boolean pushedMeanwhile = hold != null && versions.getOrDefault(partition, 0L) > hold.version();
    freed.put(partition, ++clock);
    return pushedMeanwhile && makeReady(partition, nowNanos);
  }

  /** Ready unless a pop has it in flight or a hold is still running. */
  private boolean makeReady(String partition, long nowNanos) {
    Hold hold = held.get(partition);
    if (inFlight.containsKey(partition) || hold != null && hold.untilNanos() > nowNanos) {
      return false;
    }
    held.remove(partition);
    if (ready.isEmpty()) {
      pushed.firstReady(nowNanos);
    }
    return ready.add(partition);
  }

  /**
   * Hands out up to {@code k} ready partitions, oldest first. The first {@code exclusive} (the ones
   * a pop expects to claim) are in flight until checked back, so concurrent pops of this broker
   * spread over different partitions; the rest are spares the pop tries only if those fail, and
   * stay available to others meanwhile.
   */
  synchronized List<Taken> take(int k, int exclusive) {
    List<Taken> out = new ArrayList<>(Math.min(k, ready.size()));
    Iterator<String> it = ready.iterator();
    while (it.hasNext() && out.size() < k) {
      String p = it.next();
      long v = versions.getOrDefault(p, 0L);
      boolean mine = out.size() < exclusive;
      if (mine) {
        it.remove();
        inFlight.put(p, v);
      }
      out.add(new Taken(p, v, mine));
    }
    return out;
  }

  /** The version a pop observes before claiming a partition it did not take (single route). */
  synchronized long version(String partition) {
    return versions.getOrDefault(partition, 0L);
  }

  /**
   * Checks a verdict back; returns true when the partition is ready again. A leased delivery is
   * held out until its release; a locked or deferred partition until {@code retryAtNanos} (the
   * revisit wheel's time) or, without one, until the lock holder's own verdict; an empty or missing
   * one leaves the ring unless a push came after {@code observed}; an autoAck delivery may have
   * left more and stays. {@code exclusive}: the pop held it in flight (not a borrowed spare, whose
   * verdict must not end another pop's flight).
   */
  synchronized boolean checkIn(
      String partition,
      long observed,
      boolean exclusive,
      Verdict verdict,
      boolean autoAck,
      long retryAtNanos,
      long nowNanos) {
    if (exclusive) {
      inFlight.remove(partition);
    }
    boolean newer = versions.getOrDefault(partition, 0L) > observed;
    if (verdict == Verdict.DELIVERED) {
      pushed.remove(partition);
    }
    switch (verdict) {
      case DELIVERED -> {
        if (autoAck) {
          pushed.unknown(partition);
          return makeReady(partition, nowNanos);
        }
        hold(partition, UNTIL_RELEASED, false, nowNanos);
        return false;
      }
      case LOCKED, DEFERRED -> {
        if (freedSince(partition, observed)) {
          // the lease this verdict saw ended while the pop was out: holding now would strand
          // the partition behind a lease that is over
          return makeReady(partition, nowNanos);
        }
        if (retryAtNanos != 0) {
          // a lease or a gate with a known end: the wheel's time
          hold(partition, retryAtNanos, verdict == Verdict.DEFERRED, nowNanos);
        } else if (newer) {
          return makeReady(partition, nowNanos); // pushed since: the holder's claim may not see it
        } else {
          ready.remove(partition); // another pop's claim is on it; its verdict decides
        }
        return false;
      }
      default -> {
        if (newer) {
          return makeReady(partition, nowNanos);
        }
        ready.remove(partition);
        versions.remove(partition);
        freed.remove(partition);
        pushed.remove(partition);
        reseeds.empty(partition);
        return false;
      }
    }
  }

  /** Whether the partition's hold ended after a pop observed {@code version}. */
  synchronized boolean freedSince(String partition, long version) {
    return freed.getOrDefault(partition, 0L) > version;
  }

  /**
   * Holds the partition out; a hold replacing another keeps the older version, so that a push that
   * landed under the first still counts when the hold ends.
   */
  private void hold(String partition, long untilNanos, boolean gate, long nowNanos) {
    ready.remove(partition);
    held.merge(
        partition,
        new Hold(untilNanos, versions.getOrDefault(partition, 0L), gate, nowNanos),
        (old, now) ->
            new Hold(now.untilNanos(), Math.min(old.version(), now.version()), gate, nowNanos));
  }

  /**
   * Releases every partition a visibility gate holds: the queue's options changed, and the gates'
   * times with them. A claim running now (in flight, a spare, a pop of the one partition) may have
   * read the old options: each partition such a claim can be on (ready, in flight, or held by a
   * gate) moves to a new version, freed at it, so a verdict observed before makes it ready instead
   * of holding it, and one observed after holds it. (Moving the freed mark alone made every later
   * claim count as one from before: never held, the partition was claimed by pop after pop until
   * its gate opened.) Cold partitions keep their versions, so that pruning still forgets them.
   * Returns how many became ready.
   */
  synchronized int releaseGates(long nowNanos) {
    List<String> gated = new ArrayList<>();
    held.forEach(
        (p, hold) -> {
          if (hold.gate()) {
            gated.add(p);
          }
        });
    Set<String> claimable = new HashSet<>(ready);
    claimable.addAll(inFlight.keySet());
    claimable.addAll(gated);
    for (String p : claimable) {
      versions.put(p, ++clock);
      freed.put(p, clock);
    }
    int readied = 0;
    for (String p : gated) {
      readied += release(p, nowNanos) ? 1 : 0;
    }
    return readied;
  }

  /**
   * Returns candidates a pop took but never tried (it claimed enough before reaching them). Only
   * the ones it held in flight come back; spares never left.
   *
   * @return how many became ready again
   */
  synchronized int giveBack(List<Taken> untried, long nowNanos) {
    int back = 0;
    for (Taken t : untried) {
      if (inFlight.remove(t.partition()) != null && makeReady(t.partition(), nowNanos)) {
        back++;
      }
    }
    return back;
  }

  synchronized boolean hasReady() {
    return !ready.isEmpty();
  }

  synchronized int readyCount() {
    return ready.size();
  }

  synchronized boolean isReady(String partition) {
    return ready.contains(partition);
  }

  /**
   * Whether a pop of this one partition should claim it: it is ready, or the ring cannot tell. It
   * cannot when the last reseed read only a page (see {@link ReseedSchedule#covers}) and the
   * partition is neither in flight nor held, or held by a delivery from before that reseed: only a
   * reseed that draws it finds such a lease expired, and a consumer popping this one partition
   * waited for that draw.
   */
  synchronized boolean worthClaiming(String partition) {
    if (ready.contains(partition)) {
      return true;
    }
    Hold hold = held.get(partition);
    return !inFlight.containsKey(partition)
        && !reseeds.covers(partition)
        && (hold == null
            || hold.untilNanos() == UNTIL_RELEASED && reseeds.endedAfter(hold.sinceNanos()));
  }

  /** A pop or an ack of the group used the ring now (System.nanoTime). */
  void used(long nowNanos) {
    lastUsedNanos = nowNanos;
  }

  /**
   * Unused for {@code idleNanos} and nothing in flight: its group stopped popping on this broker.
   */
  synchronized boolean idle(long nowNanos, long idleNanos) {
    return nowNanos - lastUsedNanos > idleNanos && inFlight.isEmpty();
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

  /** Whether no pop has made (or is making) first contact through this ring yet. */
  synchronized boolean awaitsFirstContact() {
    return !contacted;
  }

  /** The first-contact pop failed: the next pop routes first contact again. */
  synchronized void firstContactFailed() {
    contacted = false;
  }

  /** Whether a reseed has completed: until then the ring cannot answer "nothing here". */
  synchronized boolean primed() {
    return reseeds.primed();
  }

  /** True when the caller should reseed now; it must then call {@link #reseeded}. */
  synchronized boolean startReseed(long nowNanos, long intervalNanos) {
    return reseeds.start(nowNanos, intervalNanos, ready.isEmpty());
  }

  /** See {@link ReseedSchedule}. */
  synchronized boolean reseedDue(long nowNanos, long intervalNanos) {
    return reseeds.due(nowNanos, intervalNanos, ready.isEmpty());
  }

  /**
   * Ends a reseed with what SQL found takeable; {@code fullPage} means more may wait. A partition a
   * visibility gate holds until a known time stays held for {@link #GATE_RECHECK_NANOS}: the reseed
   * does not read the gates, and releasing it cost a claim that answered "deferred" again, every
   * interval until that time.
   */
  synchronized void reseeded(List<String> partitions, boolean fullPage, long nowNanos) {
    boolean released = false;
    for (String p : partitions) {
      Hold hold = held.get(p);
      if (hold == null
          || !hold.gate()
          || hold.untilNanos() <= nowNanos
          || nowNanos - hold.sinceNanos() >= GATE_RECHECK_NANOS) {
        released |= release(p, nowNanos);
      }
    }
    reseeds.ended(fullPage, released, nowNanos);
  }

  /**
   * Forgets what the ring keeps of partitions it has no use for now: not ready, in flight or held,
   * and neither pushed nor freed since the previous prune. A partition stays known after its lease
   * ended with nothing behind it, so a group that keeps popping partitions it never sees again (one
   * per order, say) grew its ring by each of them for as long as it popped. A pop that observed one
   * before it was forgotten checks back as if nothing had happened since, which a reseed corrects.
   *
   * @return how many partitions it forgot
   */
  synchronized int prune() {
    long horizon = prunedAt;
    prunedAt = clock;
    List<String> cold = new ArrayList<>();
    for (String p : knownNames()) {
      if (versions.getOrDefault(p, 0L) <= horizon
          && freed.getOrDefault(p, 0L) <= horizon
          && !ready.contains(p)
          && !inFlight.containsKey(p)
          && !held.containsKey(p)) {
        cold.add(p);
      }
    }
    for (String p : cold) {
      versions.remove(p);
      freed.remove(p);
      pushed.remove(p);
    }
    return cold.size();
  }

  /** How many partitions the ring keeps anything of. */
  synchronized int known() {
    return knownNames().size();
  }

  private Set<String> knownNames() {
    Set<String> names = new HashSet<>(versions.keySet());
    names.addAll(freed.keySet());
    names.addAll(pushed.partitions());
    return names;
  }

  /** A reseed that failed (database down): retried after the interval, not by every pop. */
  synchronized void reseedFailed(long nowNanos) {
    reseeds.failed(nowNanos);
  }

  /** See {@link Arrivals#holdUntil}. */
  synchronized long holdUntil(long waitNanos, int batch, long maxBytes, long nowNanos) {
    return pushed.holdUntil(ready, waitNanos, batch, maxBytes, nowNanos);
  }
}
