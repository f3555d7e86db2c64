package queen.bench;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Background load on one queue for the scenarios that measure something else meanwhile: producers
 * pushing batches to random partitions, consumers popping and acking, until stopped.
 */
final class SteadyLoad {
  final AtomicLong pushed = new AtomicLong();
  final AtomicLong consumed = new AtomicLong();
  final AtomicLong errors = new AtomicLong();
  private final AtomicBoolean stop = new AtomicBoolean();
  private final AtomicLong ids = new AtomicLong();
  private final Target target;
  private final String queue;
  private final int partitions;

  SteadyLoad(Target target, String queue, int partitions) {
    this.target = target;
    this.queue = queue;
    this.partitions = partitions;
  }

  /** Pushes {@code batch} messages at a time to a random partition. */
  Callable<Void> producer(int batch) {
    return () -> {
      while (!stop.get()) {
        String partition = "p" + ThreadLocalRandom.current().nextInt(partitions);
        List<Target.Message> messages = new ArrayList<>(batch);
        for (int i = 0; i < batch; i++) {
          messages.add(
              new Target.Message(
                  partition, queue + "-" + ids.getAndIncrement(), Payloads.of(30, 0)));
        }
        try {
          target.push(queue, messages);
          pushed.addAndGet(batch);
        } catch (Exception e) {
          errors.incrementAndGet();
        }
      }
      return null;
    };
  }

  /** Pops up to {@code batch} for the group (waiting up to a second) and acks them. */
  Callable<Void> consumer(String group, int batch) {
    return () -> {
      while (!stop.get()) {
        try {
          Target.Delivery d = target.pop(queue, group, batch, false, 1000);
          if (d != null) {
            target.ack(d);
            consumed.addAndGet(d.size());
          }
        } catch (Exception e) {
          errors.incrementAndGet();
        }
      }
      return null;
    };
  }

  void stop() {
    stop.set(true);
  }
}
