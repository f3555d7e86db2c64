package queen.server.pop;

import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Every hot-list ring and wake gate of this broker, by queue and consumer group, and the hooks that
 * feed them: a local push (before its response is sent, so that a pop right after the push sees
 * it), an ack that released a lease while the partition has more (ack-promote), and the revisit
 * wheel. Discovery pops park on one gate that every push opens.
 */
public final class HotLists {
  private final Map<String, QueueState> queues = new ConcurrentHashMap<>();
  private final WakeGate anyQueue = new WakeGate();
  private final MeterRegistry meters;

  public HotLists(MeterRegistry meters) {
    this.meters = meters;
  }

  private final class QueueState {
    final WakeGate gate = new WakeGate();
    final Map<String, HotList> rings = new ConcurrentHashMap<>();

    QueueState(String queue) {
      Gauge.builder("queen_queue_parked_consumers", gate, WakeGate::parked)
          .description("Long-polls parked on the queue's wake gate")
          .tag("queue", queue)
          .register(meters);
    }
  }

  private QueueState queue(String name) {
    return queues.computeIfAbsent(name, QueueState::new);
  }

  WakeGate gate(String queue) {
    return queue(queue).gate;
  }

  WakeGate anyQueueGate() {
    return anyQueue;
  }

  HotList ring(String queue, String group) {
    return queue(queue)
        .rings
        .computeIfAbsent(
            group,
            g -> {
              HotList ring = new HotList();
              Gauge.builder("queen_hotlist_partitions", ring, HotList::size)
                  .description("Partitions in a hot-list ring")
                  .tag("queue", queue)
                  .tag("group", g)
                  .register(meters);
              return ring;
            });
  }

  /** A local push stored {@code count} messages in a partition: every group's ring learns it. */
  public void pushed(String queue, String partition, int count) {
    QueueState q = queue(queue);
    long now = System.nanoTime();
    for (HotList ring : q.rings.values()) {
      ring.add(partition, count, now);
    }
    q.gate.open();
    anyQueue.open();
  }

  /** A partition has more for one group (ack-promote, revisit): back into that group's ring. */
  public void promote(String queue, String partition, String group) {
    ring(queue, group).add(partition, -1, System.nanoTime());
    queue(queue).gate.open();
    anyQueue.open();
  }
}
