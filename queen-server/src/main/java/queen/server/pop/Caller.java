package queen.server.pop;

/**
 * The client a pop answers. A long-poll whose client has gone stops waiting and claims nothing:
 * woken for a message, it would lease it to a closed connection, where the message waits out the
 * lease, or with {@code autoAck} is lost to the group.
 *
 * <p>{@link #leave()} ends the wait of the one pop parked for this caller, not the others on its
 * gate: after a load generator or a fleet of consumers stops, thousands leave at once, and waking
 * every parked pop per departure would be quadratic.
 */
public final class Caller {
  private volatile boolean gone;
  // the one gate its pop parks on (a pop has one): volatile, leave() reads it without the lock
  private volatile WakeGate gate;
  // its pop's place in that gate's queue while parked, only under that gate's lock
  private WakeGate.Waiter waiter;

  /** Whether the client has gone: a pop answers at once and claims nothing more. */
  public boolean gone() {
    return gone;
  }

  /** The client has gone: its pop stops waiting now, or before it next looks or parks. */
  public void leave() {
    gone = true;
    // read after gone was set, as park() sets gate before it reads gone: one side sees the other
    WakeGate g = gate;
    if (g != null) {
      g.release(this);
    }
  }

  /** Under the gate's lock: the pop parks on {@code g} for this caller. */
  void park(WakeGate g, WakeGate.Waiter w) {
    gate = g;
    waiter = w;
  }

  /** Under the gate's lock: the wait ended. */
  void unpark() {
    waiter = null;
  }

  /** Under the gate's lock: the pop's place in the queue while it is parked, else null. */
  WakeGate.Waiter waiter() {
    return waiter;
  }
}
