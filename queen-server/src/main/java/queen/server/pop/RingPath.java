package queen.server.pop;

import com.netflix.concurrency.limits.Limiter;
import io.micrometer.core.instrument.Counter;
import java.time.Duration;
import java.time.Instant;
import java.time.InstantSource;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import queen.server.store.Claim;
import queen.server.store.PartitionClaim;
import queen.server.store.PopStore;
import queen.server.store.Verdict;

/**
 * The hot-list path of a pop: a look at the group's ring decides, in memory, whether there is work
 * worth a serving permit and which partitions to claim; the claim's verdicts go back into the ring.
 * Reseeds refill the ring from SQL, and the revisit wheel brings back deferred and locked
 * partitions when their time comes and keeps the watch over parked whole-queue pops.
 */
final class RingPath {
  private static final Logger log = LoggerFactory.getLogger(RingPath.class);

  /** Candidates fetched per reseed; a full page asks for the next reseed at once. */
  static final int RESEED_PAGE = 1024;

  private final PopStore store;
  private final GroupSeeds seeds;
  private final HotLists hot;
  private final RevisitWheel wheel;
  private final ServingLimiter limiter;
  private final PopSettings settings;
  private final WaitPolicy waits;
  private final InstantSource clock;
  private final Counter emptyWithoutPermit;
  private final Counter noPermit;
  private final Counter watchWakes;

  RingPath(
      PopStore store,
      GroupSeeds seeds,
      HotLists hot,
      ServingLimiter limiter,
      PopSettings settings,
      WaitPolicy waits,
      InstantSource clock,
      Counter emptyWithoutPermit,
      Counter noPermit,
      Counter watchWakes) {
    this.store = store;
    this.seeds = seeds;
    this.hot = hot;
    this.wheel = new RevisitWheel(hot, clock);
    wheel.every(
        Duration.ofMinutes(1),
        "forgetting idle hot-lists",
        () -> hot.evictIdle(TimeUnit.MINUTES.toNanos(10)));
    this.limiter = limiter;
    this.settings = settings;
    this.waits = waits;
    this.clock = clock;
    this.emptyWithoutPermit = emptyWithoutPermit;
    this.noPermit = noPermit;
    this.watchWakes = watchWakes;
  }

  /**
   * What a look at the ring decided: SQL work to run under a serving permit ({@code failed} runs
   * when that work throws or gets no permit), no permit for a due reseed, a hold until {@code
   * holdUntil} (a minimum pop wait), or nothing to do now.
   */
  record Look(
      Supplier<List<PartitionClaim>> work, Runnable failed, boolean overloaded, long holdUntil) {
    static final Look NOTHING = new Look(null, null, false, 0);
    static final Look OVERLOADED = new Look(null, null, true, 0);

    static Look claim(Supplier<List<PartitionClaim>> work) {
      return new Look(work, null, false, 0);
    }
  }

  Look look(PopRequest request, Claim claim, PopTarget target, long deadline) {
    String queue =
        target instanceof PopTarget.Queue q ? q.queue() : ((PopTarget.Partition) target).queue();
    HotList ring = hot.ring(queue, claim.group());
    if (target instanceof PopTarget.Queue && ring.firstContact()) {
      // a group's first pop on this broker goes through the SQL wildcard procedure, which
      // carries the group-first-contact bulk seed
      return new Look(
          () -> sqlPath(ring, queue, claim, target), ring::firstContactFailed, false, 0);
    }
    long now = System.nanoTime();
    long interval = TimeUnit.MILLISECONDS.toNanos(waits.maxMs());
    if (ring.reseedDue(now, interval) && !reseed(ring, queue, claim.group(), now, interval)) {
      return Look.OVERLOADED;
    }
    if (!ring.primed()) {
      // Until a reseed completes the ring cannot say "nothing here". A pop that does not wait
      // asks SQL; a long-poll parks, and the reseed's end opens the gate.
      return request.waitMillis() == 0
          ? Look.claim(() -> sqlPath(ring, queue, claim, target))
          : Look.NOTHING;
    }
    boolean ready =
        target instanceof PopTarget.Partition p
            ? ring.worthClaiming(p.partition())
            : ring.hasReady();
    if (!ready) {
      emptyWithoutPermit.increment();
      return Look.NOTHING;
    }
    int minWait = settings.minPopWaitMs(queue);
    if (minWait > 0) {
      long hold =
          ring.holdUntil(
              TimeUnit.MILLISECONDS.toNanos(minWait), request.batch(), claim.maxBytes(), now);
      if (hold != 0 && hold < deadline) {
        return new Look(null, null, false, hold);
      }
    }
    if (target instanceof PopTarget.Partition p) {
      long version = ring.version(p.partition());
      return Look.claim(
          () -> {
            List<PartitionClaim> claims = store.popSpecific(queue, p.partition(), claim);
            if (claims.isEmpty()) {
              // no such partition (yet): the ring says so until a push, or for 10 reseeds
              ring.checkIn(
                  p.partition(), version, false, Verdict.MISSING, false, 0, System.nanoTime());
            }
            checkIn(
                ring,
                queue,
                claim,
                claims,
                Map.of(p.partition(), new HotList.Taken(p.partition(), version, false)));
            return claims;
          });
    }
    int k = Math.clamp(request.partitions() * 8L, 16, 256);
    return Look.claim(() -> fromList(ring, queue, claim, k, request.partitions()));
  }

  /** Claims from up to {@code k} ready partitions of the ring; the untried ones go back. */
  private List<PartitionClaim> fromList(
      HotList ring, String queue, Claim claim, int k, int partitions) {
    List<HotList.Taken> taken = ring.take(k, partitions);
    if (taken.isEmpty()) {
      return List.of();
    }
    Map<String, HotList.Taken> byPartition = new HashMap<>();
    taken.forEach(t -> byPartition.put(t.partition(), t));
    List<PartitionClaim> claims;
    try {
      claims = store.popList(queue, taken.stream().map(HotList.Taken::partition).toList(), claim);
    } catch (RuntimeException e) {
      // a wake may have been spent on this pop: others may take what it held
      hot.wake(queue, ring.giveBack(taken, System.nanoTime()));
      throw e;
    }
    checkIn(ring, queue, claim, claims, byPartition);
    List<HotList.Taken> untried = new ArrayList<>();
    for (HotList.Taken t : taken) {
      if (claims.stream().noneMatch(c -> c.partition().equals(t.partition()))) {
        untried.add(t);
      }
    }
    int back = untried.isEmpty() ? 0 : ring.giveBack(untried, System.nanoTime());
    if (back > 0) {
      hot.wake(queue, back); // others parked meanwhile may take what this pop did not
    } else if (ring.hasReady()) {
      // a push woke one pop per partition; more became ready than this pop took: pass it on
      hot.passOn(queue);
    }
    return claims;
  }

  /** The SQL path for a ring-served target: wildcard scan (with the bulk seed) or the partition. */
  private List<PartitionClaim> sqlPath(HotList ring, String queue, Claim claim, PopTarget target) {
    List<PartitionClaim> claims;
    if (target instanceof PopTarget.Partition p) {
      claims = store.popSpecific(queue, p.partition(), claim);
    } else {
      seeds.ensure(target, claim);
      claims = store.popWildcard(queue, claim);
    }
    checkIn(ring, queue, claim, claims, Map.of());
    return claims;
  }

  /**
   * Keeps the floor under whole-queue long-polls, which park until their deadline or a wake rather
   * than look once per POP_WAIT_MAX_INTERVAL_MS each (5,000 parked pops looking once a second took
   * a quarter of a core and 50 MB/s of re-parked stacks). Twice per interval, for each queue with
   * parked whole-queue pops and each of their groups: a ring due a reseed is reseeded (what other
   * brokers stored without a hint comes in, and what it finds wakes pops); a ring holding ready
   * work wakes a pop (covering a lost or unpassed wake); a ring that is gone, or awaits first
   * contact, wakes a pop to rebuild it. Each wake reaches one pop where wakes go one at a time.
   * Discovery pops, which park the same way, get one pop woken per filter and group that has any
   * parked (see {@link HotLists#watchDiscoveries()}).
   */
  void keepWatch() {
    // twice per interval, so that a ring's reseed, due once per interval, is at most half late
    // guarded by the wheel: parked pops have no other floor
    wheel.every(
        Duration.ofMillis(Math.max(1, waits.maxMs() / 2)),
        "the watch over parked pops",
        this::watch);
  }

  private void watch() {
    long interval = TimeUnit.MILLISECONDS.toNanos(waits.maxMs());
    // a quarter interval ahead: a reseed is stamped when it ends, and the tick that comes an
    // interval after its start must still find it due
    long now = System.nanoTime() + interval / 4;
    for (String queue : hot.parkedByQueue().keySet()) {
      WakeGate gate = hot.gate(queue);
      for (String group : gate.wholeQueueGroups()) {
        HotList ring = hot.existingRing(queue, group);
        if (ring == null || ring.awaitsFirstContact()) {
          gate.open(1);
          watchWakes.increment();
        } else if (ring.reseedDue(now, interval)) {
          Thread.startVirtualThread(() -> reseedForWatch(ring, queue, group, now, interval));
        } else if (ring.hasReady()) {
          gate.open(1);
          watchWakes.increment();
        }
      }
    }
    watchWakes.increment(hot.watchDiscoveries());
  }

  private void reseedForWatch(HotList ring, String queue, String group, long now, long interval) {
    try {
      reseed(ring, queue, group, now, interval);
    } catch (RuntimeException e) {
      // reseed marked it failed: the watch, or a pop's look, tries again an interval later
      log.debug("reseed of {} for group {} failed: {}", queue, group, e.toString());
    }
  }

  /** Refills the ring from SQL; false when no permit was free (the reseed stays due). */
  private boolean reseed(HotList ring, String queue, String group, long now, long interval) {
    if (!ring.startReseed(now, interval)) {
      return true;
    }
    Optional<Limiter.Listener> permit = limiter.acquire();
    if (permit.isEmpty()) {
      ring.reseedFailed(now - interval);
      noPermit.increment();
      return false;
    }
    try {
      List<String> names = store.candidates(queue, group, RESEED_PAGE);
      ring.reseeded(names, names.size() >= RESEED_PAGE, System.nanoTime());
      permit.get().onIgnore(); // not a pop: its latency says nothing about the pops' queueing
      // pops parked before what the reseed found (pushed through another broker, or while the
      // ring was unprimed): one per ready partition looks again (every one where wakes cannot
      // go one at a time, see WakeGate)
      hot.wake(queue, ring.readyCount());
      return true;
    } catch (RuntimeException e) {
      ring.reseedFailed(System.nanoTime());
      permit.get().onIgnore();
      throw e;
    }
  }

  /**
   * Verdicts back into the ring; deferred and locked partitions with a known time, and leased
   * deliveries at their lease's end, go to the revisit wheel, and a partition that is ready again
   * wakes the parked pops.
   */
  private void checkIn(
      HotList ring,
      String queue,
      Claim claim,
      List<PartitionClaim> claims,
      Map<String, HotList.Taken> taken) {
    long now = System.nanoTime();
    Instant wallNow = clock.instant();
    int readyAgain = 0;
    for (PartitionClaim c : claims) {
      HotList.Taken t = taken.get(c.partition());
      long observed = t == null ? 0 : t.version();
      long retryAt = 0;
      boolean gated =
          (c.verdict() == Verdict.DEFERRED || c.verdict() == Verdict.LOCKED)
              && !ring.freedSince(c.partition(), observed);
      // a lease that ends with no ack: nothing else offers the partition again but a reseed,
      // which on a wide queue reads a random page and may miss it again and again (whatever was
      // freed meanwhile: the lease is this claim's own)
      if (c.retryAt() != null && (gated || c.verdict() == Verdict.DELIVERED)) {
        retryAt = now + Math.max(0, Duration.between(wallNow, c.retryAt()).toNanos());
        wheel.schedule(queue, claim.group(), c.partition(), c.retryAt());
      }
      boolean ready =
          ring.checkIn(
              c.partition(),
              observed,
              t != null && t.exclusive(),
              c.verdict(),
              claim.autoAck(),
              retryAt,
              now);
      readyAgain += ready ? 1 : 0;
    }
    if (readyAgain > 0) {
      hot.wake(queue, readyAgain);
    }
  }

  /** Stops the revisit wheel. */
  void close() {
    wheel.close();
  }
}
