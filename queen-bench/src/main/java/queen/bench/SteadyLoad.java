package queen.bench;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;

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

  /** Pushes {@code batch} messages at a time to a random partition, as fast as they go. */
  Callable<Void> producer(int batch) {
    return producer(batch, 0);
  }

  /**
   * Pushes {@code batch} messages at a time to a random partition, {@code pushesPerSecond} pushes a
   * second (0: as fast as they go).
   */
  Callable<Void> producer(int batch, double pushesPerSecond) {
    return () -> {
      Pace pace = new Pace(pushesPerSecond);
      while (!stop.get()) {
        pace.next();
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
    return consumer(group, batch, 0);
  }

  /** The same, {@code popsPerSecond} pops a second (0: as fast as they go). */
  Callable<Void> consumer(String group, int batch, double popsPerSecond) {
    return () -> {
      Pace pace = new Pace(popsPerSecond);
      while (!stop.get()) {
        pace.next();
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

  /** A fixed schedule of so many steps a second; none with 0. */
  private static final class Pace {
    private final long interval;
    private long next = System.nanoTime();

    Pace(double perSecond) {
      interval = perSecond > 0 ? (long) (TimeUnit.SECONDS.toNanos(1) / perSecond) : 0;
    }

    void next() {
      if (interval > 0) {
        LockSupport.parkNanos(Math.max(0, next - System.nanoTime()));
        next += interval;
      }
    }
  }
}
