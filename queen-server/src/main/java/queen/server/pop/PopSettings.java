package queen.server.pop;

import java.util.Map;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * Broker-wide pop switches read on every pop, refreshed from the database so that all brokers
 * agree: pop maintenance mode and the queues' minimum pop wait. The pop path pays one relaxed read
 * of {@code anyMinPopWait}, false on every broker where no queue configured the option, rather than
 * a per-queue map lookup.
 */
public final class PopSettings {
  private volatile boolean popMaintenance;
  private final AtomicBoolean anyMinPopWait = new AtomicBoolean();
  private volatile Map<String, Integer> minPopWaitMs = Map.of();
  private volatile Runnable turnedOn = () -> {};

  /**
   * Runs when pop maintenance turns on (here, or read from the database): the pops parked before it
   * must answer at once, not deliver what a push wakes them for.
   */
  public void onPopMaintenance(Runnable wakeParked) {
    turnedOn = wakeParked;
  }

  public void update(boolean maintenance, Map<String, Integer> minPopWait) {
    setPopMaintenance(maintenance);
    minPopWaitMs = Map.copyOf(minPopWait);
    anyMinPopWait.setRelease(!minPopWait.isEmpty());
  }

  public void setPopMaintenance(boolean on) {
    boolean was = popMaintenance;
    popMaintenance = on;
    if (on && !was) {
      turnedOn.run();
    }
  }

  public boolean popMaintenance() {
    return popMaintenance;
  }

  /** The queue's minimum pop wait in milliseconds, 0 when off. */
  int minPopWaitMs(String queue) {
    if (!anyMinPopWait.getOpaque()) {
      return 0;
    }
    return minPopWaitMs.getOrDefault(queue, 0);
  }
}
