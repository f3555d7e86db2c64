package queen.server.pop;

import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.MeterRegistry;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * Every hot-list ring and wake gate of this broker, by queue and consumer group, and the hooks that
 * feed them: a local push (before its response is sent, so that a pop right after the push sees
 * it), an ack that released a lease while the partition has more (ack-promote), and the revisit
 * wheel. Discovery pops park on a gate per filter (namespace, task), each of which every push opens
 * for one waiter.
 */
public final class HotLists {
  private final Map<String, QueueState> queues = new ConcurrentHashMap<>();
  private final Map<DiscoveryKey, DiscoveryGate> discoveries = new ConcurrentHashMap<>();

  private record DiscoveryKey(PopTarget.Discovery filter, String group) {}

  /** A discovery gate and when a pop last looked it up (System.nanoTime). */
  private static final class DiscoveryGate {
    final WakeGate gate = new WakeGate();
    volatile long lastUsedNanos;
  }

  private final MeterRegistry meters;

  public HotLists(MeterRegistry meters) {
    this.meters = meters;
    Gauge.builder(
            "queen_pop_discovery_parked_consumers",
            discoveries,
            d -> d.values().stream().mapToInt(g -> g.gate.parked()).sum())
        .description("Discovery long-polls (by namespace or task) parked, every filter together")
        .register(meters);
  }

  private final class QueueState {
    final String name;
    final WakeGate gate = new WakeGate();
    final Map<String, HotList> rings = new ConcurrentHashMap<>();
    final Map<String, Meter> ringMeters = new ConcurrentHashMap<>();
    final List<Meter> meters = new CopyOnWriteArrayList<>();
    volatile long lastUsedNanos = System.nanoTime();

    QueueState(String queue) {
      this.name = queue;
      meters.add(
          Gauge.builder("queen_queue_parked_consumers", gate, WakeGate::parked)
              .description("Long-polls parked on the queue's wake gate")
              .tag("queue", queue)
              .register(HotLists.this.meters));
    }
  }

  private QueueState queue(String name) {
    QueueState q = queues.computeIfAbsent(name, QueueState::new);
    q.lastUsedNanos = System.nanoTime();
    return q;
  }

  /**
   * Forgets queues nobody pushed to or popped from for {@code idleNanos} and where nobody is
   * parked, with their rings and meters: a broker that saw many queue names (or pops of names that
   * do not exist) does not keep them for ever. On the queues it keeps, it forgets the rings of
   * groups that did not pop here for as long and have nothing in flight or parked: every push feeds
   * every ring of its queue, so a busy queue would otherwise keep one ring, up to one entry per
   * partition, and one gauge for each one-off group name it ever served. A forgotten ring is
   * rebuilt by a first contact and a reseed. The rings kept forget the partitions they have no use
   * for ({@link HotList#prune()}).
   */
  void evictIdle(long idleNanos) {
    long now = System.nanoTime();
    // filters are the clients' strings: a gate nobody parks on or looked up for as long goes;
    // atomic with discoveryGate(), so a pop never parks on a gate that wakes no longer reach
    for (DiscoveryKey key : discoveries.keySet()) {
      discoveries.computeIfPresent(
          key, (k, d) -> d.gate.parked() == 0 && now - d.lastUsedNanos > idleNanos ? null : d);
    }
    for (QueueState q : queues.values()) {
      if (now - q.lastUsedNanos > idleNanos && q.gate.parked() == 0 && queues.remove(q.name, q)) {
        q.meters.forEach(meters::remove);
        q.ringMeters.values().forEach(meters::remove);
        continue;
      }
      for (String group : q.rings.keySet()) {
        // atomic with ring()'s creation; a pop that found the ring just before uses it for one
        // look, and the next starts as a first contact
        q.rings.computeIfPresent(
            group,
            (g, ring) -> {
              if (!ring.idle(now, idleNanos) || q.gate.parks(g)) {
                ring.prune();
                return ring;
              }
              Meter gauge = q.ringMeters.remove(g);
              if (gauge != null) {
                meters.remove(gauge);
              }
              return null;
            });
      }
    }
  }

  /** Long-polls parked on each queue's gate now, for the queues where any are. */
  public Map<String, Integer> parkedByQueue() {
    Map<String, Integer> out = new java.util.TreeMap<>();
    for (QueueState q : queues.values()) {
      int n = q.gate.parked();
      if (n > 0) {
        out.put(q.name, n);
      }
    }
    return out;
  }

  /** Wakes every parked pop of every queue. */
  void openAll() {
    openDiscoveries();
    for (QueueState q : queues.values()) {
      q.gate.open();
    }
  }

  WakeGate gate(String queue) {
    return queue(queue).gate;
  }

  /**
   * Where discovery pops of one filter and group park: any of them can take what wakes one, so
   * wakes go one at a time.
   */
  WakeGate discoveryGate(PopTarget.Discovery filter, String group) {
    long now = System.nanoTime();
    return discoveries.compute(
            new DiscoveryKey(filter, group),
            (k, found) -> {
              DiscoveryGate d = found == null ? new DiscoveryGate() : found;
              d.lastUsedNanos = now;
              return d;
            })
        .gate;
  }

  /**
   * The watch's tick for discovery pops, which have no ring to consult: one parked pop of each
   * filter and group looks in SQL, the floor that finds an expired lease or a message come due
   * (nothing else announces them) at the cost of one query per gate and tick, where every parked
   * discovery pop looked once per backoff bound. Returns the pops woken.
   */
  int watchDiscoveries() {
    int woken = 0;
    for (DiscoveryGate d : discoveries.values()) {
      if (d.gate.parked() > 0) {
        d.gate.open(1);
        woken++;
      }
    }
    return woken;
  }

  /** Wakes every parked discovery pop. */
  private void openDiscoveries() {
    discoveries.values().forEach(d -> d.gate.open());
  }

  /**
   * Work appeared in some queue: one discovery pop per filter and group looks for it. Not every
   * parked one: each looks in SQL, so a push would have cost a query per parked discovery pop. A
   * filter that does not match the queue spends one look; a pop that finds work passes the wake on.
   */
  private void wakeDiscoveries() {
    for (DiscoveryGate d : discoveries.values()) {
      d.gate.open(1);
    }
  }

  HotList ring(String queue, String group) {
    QueueState state = queue(queue);
    long now = System.nanoTime();
    HotList known = state.rings.get(group);
    if (known != null) {
      // without the slot's lock, which every look and ack of the group would queue on: a ring
      // forgotten meanwhile serves this one look, and the next starts as a first contact
      known.used(now);
      return known;
    }
    return state.rings.compute(
        group,
        (g, found) -> {
          HotList ring = found;
          if (ring == null) {
            ring = new HotList();
            state.ringMeters.put(
                g,
                Gauge.builder("queen_hotlist_partitions", ring, HotList::size)
                    .description("Partitions in a hot-list ring")
                    .tag("queue", queue)
                    .tag("group", g)
                    .register(meters));
          }
          ring.used(now);
          return ring;
        });
  }

  /** The group's ring on the queue if this broker has one; never creates it. */
  HotList existingRing(String queue, String group) {
    QueueState q = queues.get(queue);
    return q == null ? null : q.rings.get(group);
  }

  /**
   * The group's cursors on the queue (every queue when null) were moved by a delete or a seek: drop
   * its rings, so that the next pop starts from a reseed and first contact as if new, and wake
   * parked pops so that they look again.
   */
  void forget(String queue, String group) {
    for (QueueState q : queue == null ? List.copyOf(queues.values()) : List.of(queue(queue))) {
      if (q.rings.remove(group) != null) {
        Meter gauge = q.ringMeters.remove(group);
        if (gauge != null) {
          meters.remove(gauge);
        }
      }
      q.gate.open();
    }
    openDiscoveries();
  }

  /**
   * A push stored {@code count} messages of {@code bytes} payload bytes in a partition: every
   * group's ring learns it.
   */
  public void pushed(String queue, String partition, int count, long bytes) {
    // only a queue popped here has rings or parked pops to tell: a state made for every queue
    // pushed anywhere (or named by any NOTIFY on the hint channel) held a gate and a metrics series
    // each until the idle prune; a pop that comes later looks in SQL first
    QueueState q = queues.get(queue);
    if (q != null) {
      long now = System.nanoTime();
      q.lastUsedNanos = now;
      for (HotList ring : q.rings.values()) {
        ring.add(partition, count, bytes, now);
      }
      q.gate.open(1);
    }
    wakeDiscoveries();
  }

  /**
   * A lease of the group on the partition ended. With messages behind it the partition is ready
   * again (ack-promote) and parked pops are woken; without, it only stops being held out, so that
   * the next push makes it ready.
   */
  public void released(String queue, String partition, String group, boolean hasMore) {
    if (hasMore) {
      if (!revisit(queue, group, partition)) {
        // discovery pops keep no ring, whose answer may be that the partition was ready already
        wakeDiscoveries();
      }
      return;
    }
    // only a ring that exists holds anything: an ack, or another broker's hint of one, builds no
    // ring and keeps none in use, or a broker where the group never pops kept its ring for ever,
    // fed by every push
    HotList ring = existingRing(queue, group);
    if (ring != null && ring.unhold(partition, System.nanoTime())) {
      // the push that landed during the lease found the gate open and nothing ready: wake again
      queue(queue).gate.open(1);
      wakeDiscoveries();
    }
  }

  /**
   * The partition is takeable again for the group (ack-promote, revisit wheel): wake pops. Returns
   * whether it woke any (the ring had not known the partition as ready). Without a ring here it
   * wakes only a pop of the group parked on this broker (with QUEEN_HOTLIST=0 no pop has a ring),
   * not a pop of another group for each hint of another broker's ack.
   */
  boolean revisit(String queue, String group, String partition) {
    HotList ring = existingRing(queue, group);
    if (ring == null) {
      QueueState q = queues.get(queue);
      if (q == null || !q.gate.parks(group)) {
        return false;
      }
    } else if (!ring.release(partition, System.nanoTime())) {
      return false;
    }
    queue(queue).gate.open(1);
    wakeDiscoveries();
    return true;
  }

  /**
   * A queue's options may have changed (a configure here, or a refresh hint from another broker):
   * the partitions visibility gates hold are takeable at once, so that a lowered delayedProcessing
   * or windowBuffer takes effect now rather than at the times the old options gave.
   */
  public void releaseGates() {
    long now = System.nanoTime();
    for (QueueState q : queues.values()) {
      int readied = 0;
      for (HotList ring : q.rings.values()) {
        readied += ring.releaseGates(now);
      }
      if (readied > 0) {
        q.gate.open(readied);
        wakeDiscoveries();
      }
    }
  }

  /** A pop could not use all it was woken for: pass a wake on (see {@link WakeGate#passOn()}). */
  void passOn(String queue) {
    queue(queue).gate.passOn();
  }

  /** {@code n} partitions of the queue are ready for a pop that is not looking: wake that many. */
  void wake(String queue, int n) {
    queue(queue).gate.open(n);
  }
}
