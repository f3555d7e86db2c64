package queen.bench;

import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;

/**
 * Thousands of long-poll consumers parked on a queue of many partitions: what they cost while idle
 * (the broker's database calls per second, its memory) and how fast a trickle of pushes reaches
 * them.
 */
final class Parked {
  private Parked() {}

  static Result run(
      BrokerTarget target,
      Long brokerPid,
      int consumers,
      int partitions,
      double rate,
      int idleSeconds,
      int seconds,
      boolean discovery)
      throws Exception {
    String q = "bench-parked-" + Long.toString(System.currentTimeMillis(), 36);
    String namespace = q + "-ns";
    if (discovery) {
      target.configureIn(q, namespace);
    } else {
      target.prepare(q, partitions);
    }
    Map<String, Long> pushedAt = new ConcurrentHashMap<>();
    AtomicBoolean stop = new AtomicBoolean();
    Recorder latency = new Recorder(0);
    AtomicLong delivered = new AtomicLong();
    try (ExecutorService pool = Executors.newVirtualThreadPerTaskExecutor()) {
      for (int c = 0; c < consumers; c++) {
        pool.submit(
            () -> {
              // the first pop does not wait: a long-lived client's connection has served requests
              // before (its earlier polls and acks), and the broker is read with connections in
              // that state (Jetty, for one, builds per-connection state at a second request)
              long wait = 0;
              while (!stop.get()) {
                try {
                  Target.Delivery d =
                      discovery
                          ? target.popNamespace(namespace, "bench", 10, wait)
                          : target.pop(q, "bench", 10, false, wait);
                  if (d != null) {
                    long now = System.nanoTime();
                    target.ack(d);
                    delivered.addAndGet(d.size());
                    for (Target.Delivered m : d.messages()) {
                      Long at = pushedAt.remove(m.id());
                      if (at != null) {
                        latency.latency(now - at);
                      }
                    }
                  }
                } catch (Exception e) {
                  if (!stop.get()) {
                    latency.error();
                    if (latency.errors() <= 3) {
                      System.err.println("bench: parked pop failed: " + e);
                    }
                  }
                } finally {
                  wait = 30_000; // a refused first pop was served on its connection too
                }
              }
              return null;
            });
      }
      double idleCalls;
      long trickleCalls0 = 0;
      Long rss;
      long n = 0;
      try {
        // let every consumer reach its first park, then measure a quiet period
        TimeUnit.SECONDS.sleep(Math.max(3, consumers / 1000));
        long calls0 = target.dbCalls();
        long t0 = System.nanoTime();
        TimeUnit.SECONDS.sleep(idleSeconds);
        idleCalls = (target.dbCalls() - calls0) / ((System.nanoTime() - t0) / 1e9);
        rss = brokerPid == null ? null : Rss.now(brokerPid);

        long interval = (long) (TimeUnit.SECONDS.toNanos(1) / rate);
        trickleCalls0 = target.dbCalls();
        long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(seconds);
        while (System.nanoTime() < end) {
          long next = System.nanoTime() + interval;
          String id = q + "-" + n++;
          String partition = "p" + ThreadLocalRandom.current().nextInt(partitions);
          target.push(q, List.of(new Target.Message(partition, id, Payloads.of(30, 0))));
          pushedAt.put(id, System.nanoTime());
          LockSupport.parkNanos(Math.max(0, next - System.nanoTime()));
        }
      } finally {
        // also when a push fails (the broker died): the pool's close waits for every consumer
        stop.set(true);
        pool.shutdownNow();
      }
      double trickleCalls = (target.dbCalls() - trickleCalls0) / (double) seconds;
      Map<String, Object> notes =
          Result.params(
              "idleBrokerDbCalls/s",
              Math.round(idleCalls * 10) / 10.0,
              "trickleBrokerDbCalls/s",
              Math.round(trickleCalls * 10) / 10.0,
              "latency",
              "push response to pop response");
      if (rss != null) {
        notes.put(Report.RSS_NOW, rss);
      }
      return new Result(
          "parked",
          target.name(),
          Result.params(
              "consumers",
              consumers,
              "partitions",
              partitions,
              "rate",
              rate,
              "idleSeconds",
              idleSeconds,
              "discovery",
              discovery),
          seconds,
          delivered.get(),
          delivered.get() / (double) seconds,
          n,
          latency.percentile(50),
          latency.percentile(99),
          latency.percentile(99.9),
          latency.errors(),
          notes);
    }
  }
}
