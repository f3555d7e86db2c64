package queen.server.pop;

import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import queen.server.store.Claim;
import queen.server.store.StoreException;

/**
 * One pop's looks and parks, run again each time its wait ends, until it answers. A parked pop
 * holds no thread: it waits in its gate's queue ({@link WakeGate}), or on a timer after a look that
 * met a database failure, and continues on a new virtual thread.
 */
final class LongPoll implements Runnable, WakeGate.Resume {
  private static final Logger log = LoggerFactory.getLogger(LongPoll.class);

  private final PopService pops;
  private final PopRequest request;
  private final Caller caller;
  private Claim claim;
  private final PopService.Answer answer;
  private final long deadline;
  private final boolean discovery;
  private final boolean picky;
  private int attempt;
  private boolean woken;
  private boolean looked;

  /** When the look after a failed one may start (System.nanoTime); 0: the last did not fail. */
  private long retryAt;

  LongPoll(
      PopService pops, PopRequest request, Caller caller, Claim claim, PopService.Answer answer) {
    this.pops = pops;
    this.request = request;
    this.caller = caller;
    this.claim = claim;
    this.answer = answer;
    this.deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(request.waitMillis());
    // a pop of one partition takes only some of its gate's work; a discovery pop parks on the
    // gate of its own filter, where any of its kind can take what wakes it
    this.discovery = request.target() instanceof PopTarget.Discovery;
    this.picky = !(request.target() instanceof PopTarget.Queue) && !discovery;
  }

  @Override
  public void run() {
    PopResult result;
    try {
      result = turns();
    } catch (RuntimeException e) {
      answer.failed(e);
      return;
    }
    if (result != null) {
      answer.result(result); // the answer's own failures are the answer's (PopRoutes)
    }
  }

  /** The wait ended: the next looks run on a virtual thread, not on the one that ended it. */
  @Override
  public void resume(boolean wasWoken) {
    woke(wasWoken);
    Thread.startVirtualThread(this);
  }

  private void woke(boolean wasWoken) {
    woken = wasWoken;
    if (wasWoken) {
      pops.countWake();
      // a successful wake resets the backoff; not a discovery pop's: every one looking in SQL
      // while a push lands sees its gate open, and each reset cost about six more queries
      if (!discovery) {
        attempt = 0;
      }
    }
  }

  /** Looks until there is an answer, or until it parks (null: {@link #resume} comes later). */
  private PopResult turns() {
    while (true) {
      // looked up at each turn: a gate forgotten while idle is made again, never parked on
      WakeGate gate = pops.gate(request.target(), request.group());
      if (caller.gone()) {
        if (woken) {
          gate.passOn(); // the work this pop was woken for is another's now
        }
        pops.countDeparture();
        return PopService.empty(request, claim.workerId());
      }
      // read before looking: a wake that lands between the look and the park is not lost (the
      // wake of a switch to pop maintenance too, so read before the switch)
      long seen = gate.generation();
      if (pops.popMaintenance()) {
        // switched on while this pop waited: it answers as a pop begun now, taking nothing
        return PopService.empty(request, claim.workerId());
      }
      if (retryAt != 0) {
        if (pops.stopping()) {
          return PopService.empty(request, claim.workerId());
        }
        long wait = retryAt - System.nanoTime();
        if (wait > 0) {
          // on a timer, not on the gate: a gate's wakes are for pops that can look. A second at a
          // time, so that a stop or the client's departure is seen within one
          WakeGate.after(Math.min(wait, TimeUnit.SECONDS.toNanos(1)), this);
          return null;
        }
        retryAt = 0;
        if (deadline - System.nanoTime() <= 0) {
          return PopService.empty(request, claim.workerId()); // waited out to its deadline
        }
      }
      pops.checkBeforeClaim();
      if (looked) {
        // a lease id carries the time of its claim, not of the request: a cursor created while
        // this pop waited is never younger than the lease by the wait (a late ack's check)
        claim = claim.withWorkerId(pops.nextWorkerId());
      }
      looked = true;
      PopService.Attempt a;
      try {
        a = pops.attempt(request, claim, deadline);
      } catch (StoreException e) {
        if (!(e.outage() || e.conflict()) || request.waitMillis() == 0) {
          throw e;
        }
        // a long-poll waits out a database outage or conflict as it waits for messages: Queen's
        // JS and Python consume() end on a 5xx that outlasts their three tries (old Queen answered
        // such a pop 200 with no messages). Not a server that takes no writes or lacks room: that
        // lasts, and its 503 moves a client to another broker
        pops.countFailedLook();
        if (e.conflict()) {
          log.warn("pop of group {}: conflict, looking again: {}", request.group(), e.getMessage());
        }
        long now = System.nanoTime();
        retryAt = now + pops.retryNanos(e, deadline - now);
        continue;
      }
      if (a.result() != null) {
        if (discovery && (woken || a.result().messages().size() >= request.batch())) {
          // without a ring a discovery pop cannot tell what is left: one woken that found work
          // wakes the next, and the chain ends at the first that finds none
          gate.passOn();
        }
        return a.result();
      }
      if (a.overloaded() && request.waitMillis() == 0) {
        throw new PopService.OverloadedException();
      }
      long now = System.nanoTime();
      long left = deadline - now;
      if (left <= 0) {
        if (woken) {
          // leaving with the work this pop was woken for: another may take it (a signal that
          // lands just as the wait runs out is not seen here; the watch or the others' backoff
          // bound covers it)
          gate.passOn();
        }
        return PopService.empty(request, claim.workerId());
      }
      attempt++;
      long park = pops.parkNanos(a, picky, attempt, now, left);
      if (pops.stopping()) {
        return PopService.empty(request, claim.workerId()); // shutting down: parked pops answer 204
      }
      Boolean ended =
          gate.park(seen, park, TimeUnit.NANOSECONDS, request.group(), picky, caller, this);
      if (ended == null) {
        return null;
      }
      woke(ended);
    }
  }
}
