package queen.server.pop;

import com.netflix.concurrency.limits.Limiter;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import java.time.InstantSource;
import java.util.List;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import queen.server.codec.UuidV7;
import queen.server.store.Claim;
import queen.server.store.Database;
import queen.server.store.PartitionClaim;
import queen.server.store.PopStore;
import queen.server.store.StoreException;
import queen.server.store.Verdict;

/**
 * Serves pops: chooses candidate partitions, claims in PostgreSQL, cuts the delivered frames out of
 * the blobs, and long-polls when there is nothing.
 *
 * <p>The order of the serve path is deliberate. A cheap in-memory check of the hot-list ring comes
 * first: with nothing ready and no reseed due the pop is empty without taking a serving permit or a
 * connection, because the quiet re-poll rate grows with the number of parked consumers and, if each
 * re-poll took the shared limiter, a freshly woken real delivery would queue behind thousands of
 * empty polls. Only with real work does a pop take a permit and a connection. A parked pop holds
 * neither. The frame walk happens after PostgreSQL answered, never inside it.
 */
public final class PopService {
  private volatile boolean stopping;

  private final PopStore store;
  private final GroupSeeds seeds;
  private final HotLists hot;
  private final RingPath ringPath;
  private final ServingLimiter limiter;
  private final PopSettings settings;
  private final WaitPolicy waits;
  private final long maxBytes; // QUEEN_POP_MAX_BYTES
  private final boolean hotList;
  private final UuidV7 ids;
  private final DeliveryListener delivered;
  private final SegmentCache segments;
  private final Handover handover;
  private final Counter wakes;
  private final Counter noPermit;
  private final Counter departed;
  private final Counter failedLooks;

  /** Refuses a claim by throwing; see {@link #checkBeforeClaims}. */
  private volatile Runnable beforeClaim = () -> {};

  public PopService(
      PopStore store,
      HotLists hot,
      PopSettings settings,
      WaitPolicy waits,
      long maxBytes,
      boolean hotList,
      int maxConcurrency,
      InstantSource clock,
      MeterRegistry meters,
      DeliveryListener delivered,
      SegmentCache segments) {
    this.store = store;
    this.seeds = new GroupSeeds(store);
    this.hot = hot;
    this.limiter = new ServingLimiter(maxConcurrency, meters);
    this.settings = settings;
    this.waits = waits;
    this.maxBytes = maxBytes;
    this.hotList = hotList;
    this.ids = new UuidV7(clock);
    this.delivered = delivered;
    this.segments = segments;
    this.handover = new Handover(store, segments, delivered);
    this.wakes =
        Counter.builder("queen_pop_wakes_total")
            .description("Parked long-polls woken by their gate")
            .register(meters);
    this.departed =
        Counter.builder("queen_pop_departed_total")
            .description("Long-polls ended unanswered because their client had gone")
            .register(meters);
    this.failedLooks =
        Counter.builder("queen_pop_failed_looks_total")
            .description(
                "Looks of long-polls that met a database outage or conflict: the pop looked again"
                    + " after POP_WAIT_MAX_INTERVAL_MS (at most 1 s), or waited out its wait and"
                    + " answered 204, not 503")
            .register(meters);
    this.noPermit =
        Counter.builder("queen_pop_no_permit_total")
            .description("Pop attempts that found the serving limiter full")
            .register(meters);
    this.ringPath =
        new RingPath(
            store,
            seeds,
            hot,
            limiter,
            settings,
            waits,
            clock,
            Counter.builder("queen_pop_empty_without_permit_total")
                .description("Pops answered empty from the hot-list alone, no permit, no SQL")
                .register(meters),
            noPermit,
            Counter.builder("queen_pop_watch_wakes_total")
                .description(
                    "Wakes by the ring watch: ready work nobody took, a ring to rebuild, or a"
                        + " parked discovery pop's look")
                .register(meters));
    if (hotList) {
      ringPath.keepWatch(); // without the hot-list every parked pop looks for itself
    }
  }

  /** Where a pop's answer goes, once: its result, or the failure that ended it. */
  public interface Answer {
    void result(PopResult result);

    /** {@link OverloadedException} when a pop that does not wait got no serving permit in time. */
    void failed(RuntimeException e);
  }

  /**
   * Pops, long-polling up to the request's wait, and gives the outcome to {@code answer}: on this
   * thread when it needs no wait, else later, from a virtual thread of its own. An unknown queue or
   * partition delivers nothing. Once {@code caller} has left, the pop stops waiting and claims
   * nothing more. A parked pop holds no thread (see {@link WakeGate}).
   */
  public void pop(PopRequest request, Caller caller, Answer answer) {
    // a fresh UUIDv7 worker id for the first claim (LongPoll takes another for each later one); on
    // a leased pop it is the client's leaseId
    UUID worker = ids.next();
    if (settings.popMaintenance()) {
      answer.result(empty(request, worker));
      return;
    }
    Claim claim =
        new Claim(
            request.group(),
            worker,
            request.batch(),
            request.partitions(),
            request.autoAck(),
            request.newOnly(),
            request.from(),
            maxBytes,
            0); // set by each attempt
    new LongPoll(this, request, caller, claim, answer).run();
  }

  /**
   * How long a pop that found nothing parks: on the hot-list a whole-queue or discovery pop until a
   * wake or its deadline (RingPath's watch is its floor); the others, and a pop refused a permit,
   * until the backoff bound of its {@code attempt}; one held back by a minimum pop wait until the
   * hold ends.
   */
  long parkNanos(Attempt a, boolean picky, int attempt, long now, long left) {
    long park =
        hotList && !picky && !a.overloaded()
            ? left
            : Math.min(left, TimeUnit.MILLISECONDS.toNanos(waits.intervalMs(attempt)));
    if (a.holdUntil() != 0) {
      park = Math.min(left, Math.max(0, a.holdUntil() - now));
    }
    return park;
  }

  /**
   * How long a long-poll whose look met a database outage or conflict waits before its next look:
   * the backoff's longest interval, at most a second (a raised one kept a pop from looking again
   * for its whole wait after one deadlock), or the rest of its wait when, in an outage, the next
   * look could not end by the deadline (it may wait the pool's connection timeout for a connection,
   * and Queen's clients give up on a long-poll 5 s past its timeout).
   */
  long retryNanos(StoreException failed, long left) {
    long retry = TimeUnit.MILLISECONDS.toNanos(Math.min(waits.maxMs(), 1000));
    if (failed.outage() && left - retry < Database.CONNECTION_TIMEOUT.toNanos()) {
      return left;
    }
    return Math.min(left, retry);
  }

  boolean stopping() {
    return stopping;
  }

  boolean popMaintenance() {
    return settings.popMaintenance();
  }

  void countWake() {
    wakes.increment();
  }

  void countDeparture() {
    departed.increment();
  }

  void countFailedLook() {
    failedLooks.increment();
  }

  /** When a pop cannot wait for a serving permit: the HTTP layer answers 503. */
  public static final class OverloadedException extends RuntimeException {
    OverloadedException() {
      super("the pop serving limit is reached", null, false, false);
    }
  }

  /**
   * One look for work. A delivered result ends the pop; otherwise the caller parks, until {@code
   * holdUntil} when a minimum pop wait holds an under-full claim back.
   */
  record Attempt(PopResult result, boolean overloaded, long holdUntil) {
    static final Attempt NOTHING = new Attempt(null, false, 0);
    static final Attempt OVERLOADED = new Attempt(null, true, 0);
  }

  WakeGate gate(PopTarget target, String group) {
    return switch (target) {
      case PopTarget.Partition p -> hot.gate(p.queue());
      case PopTarget.Queue q -> hot.gate(q.queue());
      case PopTarget.Discovery d -> hot.discoveryGate(d, group);
    };
  }

  Attempt attempt(PopRequest request, Claim asked, long deadline) {
    // read at each attempt, for a long-poll outlives changes of it; never for autoAck, whose claim
    // commits the cursor before a stub's blob is read (a read that failed would lose the batch)
    Claim claim = asked.withKeptBytes(request.autoAck() ? 0 : segments.keptBytes());
    return switch (request.target()) {
      case PopTarget.Discovery d ->
          withPermit(
              request,
              claim,
              () -> {
                seeds.ensure(d, claim);
                return store.popDiscover(d.namespace(), d.task(), claim);
              });
      case PopTarget.Partition p ->
          hotList ? fromRing(request, claim, p, deadline) : direct(request, claim, p);
      case PopTarget.Queue q ->
          hotList ? fromRing(request, claim, q, deadline) : scan(request, claim, q);
    };
  }

  /** QUEEN_HOTLIST=0, single partition: the SQL claim on every attempt. */
  private Attempt direct(PopRequest request, Claim claim, PopTarget.Partition p) {
    return withPermit(request, claim, () -> store.popSpecific(p.queue(), p.partition(), claim));
  }

  /**
   * QUEEN_HOTLIST=0, wildcard: the cheap pending probe first (false means definitively nothing, so
   * no permit is taken for the scan), then the SQL candidate scan.
   */
  private Attempt scan(PopRequest request, Claim claim, PopTarget.Queue q) {
    if (!store.hasPending(q.queue(), claim.group())) {
      return Attempt.NOTHING;
    }
    return withPermit(
        request,
        claim,
        () -> {
          seeds.ensure(q, claim);
          return store.popWildcard(q.queue(), claim);
        });
  }

  private Attempt fromRing(PopRequest request, Claim claim, PopTarget target, long deadline) {
    RingPath.Look look = ringPath.look(request, claim, target, deadline);
    if (look.work() == null) {
      return look.overloaded()
          ? Attempt.OVERLOADED
          : look.holdUntil() != 0 ? new Attempt(null, false, look.holdUntil()) : Attempt.NOTHING;
    }
    Attempt a;
    try {
      a = withPermit(request, claim, look.work());
    } catch (RuntimeException e) {
      failed(look);
      throw e;
    }
    if (a.overloaded()) {
      failed(look); // the work never ran: a first contact refused a permit is the next pop's
    }
    return a;
  }

  private static void failed(RingPath.Look look) {
    if (look.failed() != null) {
      look.failed().run();
    }
  }

  private Attempt withPermit(PopRequest request, Claim claim, Supplier<List<PartitionClaim>> work) {
    Optional<Limiter.Listener> permit = limiter.acquire();
    if (permit.isEmpty()) {
      noPermit.increment();
      return Attempt.OVERLOADED;
    }
    List<PartitionClaim> claims;
    try {
      claims = work.get();
    } catch (RuntimeException e) {
      permit.get().onIgnore();
      throw e;
    }
    // Only deliveries teach the limiter: an empty claim is much faster than a delivery, and
    // Vegas would read the gap between the two as queueing and shrink the limit for nothing.
    if (claims.stream().anyMatch(c -> c.verdict() == Verdict.DELIVERED)) {
      permit.get().onSuccess();
    } else {
      permit.get().onIgnore();
    }
    FrameCut cut = handover.cut(request, claim, claims);
    PopResult result = cut.result();
    if (result.isEmpty()) {
      return Attempt.NOTHING;
    }
    if (!request.autoAck() && cut.heldBack().isEmpty()) {
      // a lease running past its answer is not registered: no whole-batch ack can settle it, and
      // an extension must find every partition it holds, which the cursors still say
      delivered.leased(result.leaseId(), result.group(), cut.leased());
    }
    return new Attempt(result, false, 0);
  }

  /** A fresh UUIDv7 worker id: a pop's lease id, taken at each of its claims. */
  UUID nextWorkerId() {
    return ids.next();
  }

  static PopResult empty(PopRequest request, UUID worker) {
    return new PopResult(request.autoAck() ? null : worker, request.group(), 0, List.of());
  }

  /**
   * The group's cursors on the queue (every queue when null) were deleted or moved, here or on
   * another broker: what this broker remembers of the group there (ring, first-contact seed) is
   * stale, so it starts over as for a new group.
   */
  public void groupReset(String queue, String group) {
    seeds.forget(queue, group);
    hot.forget(queue, group);
  }

  /**
   * Shutting down: every parked long-poll stops waiting and answers 204 (its client polls again,
   * elsewhere), one waiting out a database failure within a second; pops still looking finish their
   * look.
   */
  public void stopWaiting() {
    stopping = true;
    hot.openAll();
  }

  /**
   * A check run before each claim of a pop, a long-poll's later ones included, that refuses it by
   * throwing (its exception is the pop's answer): a key the broker learned it lacks while the pop
   * waited must stop the claim, not only a pop that begins after.
   */
  public void checkBeforeClaims(Runnable check) {
    beforeClaim = check;
  }

  void checkBeforeClaim() {
    beforeClaim.run();
  }

  /** Wakes every parked pop to look again (hints may have been missed). */
  public void wakeAll() {
    hot.openAll();
  }

  /** Stops the revisit wheel. */
  public void close() {
    ringPath.close();
  }
}
