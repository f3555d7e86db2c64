package queen.bench;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Steady pushing and consuming for minutes against a broker of its own, once with a queue whose
 * retention is short and once without: with retention the size of the queen schema must level off,
 * and throughput must stay what it is without.
 */
final class RetentionRun {
  static final int PRODUCERS = 8;
  static final int PUSH_BATCH = 10;
  static final int CONSUMERS = 8;
  static final int POP_BATCH = 100;
  static final int PARTITIONS = 50;

  private RetentionRun() {}

  /**
   * One phase: pushes and pop+acks on one queue for {@code minutes}, sampling the schema's size
   * every {@code sampleSeconds}. Retention on when {@code retentionSeconds} > 0.
   */
  static Result phase(
      BrokerTarget target, Jdbc db, int minutes, int retentionSeconds, int sampleSeconds)
      throws Exception {
    String q = "bench-retention-" + Long.toString(System.currentTimeMillis(), 36);
    target.configure(
        q,
        retentionSeconds > 0
            ? "{\"leaseTime\":60,\"retentionEnabled\":true,\"retentionSeconds\":"
                + retentionSeconds
                + "}"
            : "{\"leaseTime\":60}");
    AtomicBoolean stop = new AtomicBoolean();
    AtomicLong pushed = new AtomicLong();
    AtomicLong consumed = new AtomicLong();
    AtomicLong errors = new AtomicLong();
    AtomicLong ids = new AtomicLong();
    List<Long> samples = new ArrayList<>();
    long start = System.nanoTime();
    try (ExecutorService pool = Executors.newVirtualThreadPerTaskExecutor()) {
      List<Future<?>> workers = new ArrayList<>();
      for (int w = 0; w < PRODUCERS; w++) {
        workers.add(
            pool.submit(
                () -> {
                  while (!stop.get()) {
                    String partition = "p" + ThreadLocalRandom.current().nextInt(PARTITIONS);
                    List<Target.Message> batch = new ArrayList<>(PUSH_BATCH);
                    for (int i = 0; i < PUSH_BATCH; i++) {
                      batch.add(
                          new Target.Message(
                              partition, q + "-" + ids.getAndIncrement(), Payloads.of(30, 0)));
                    }
                    try {
                      target.push(q, batch);
                      pushed.addAndGet(PUSH_BATCH);
                    } catch (Exception e) {
                      errors.incrementAndGet();
                    }
                  }
                  return null;
                }));
      }
      for (int w = 0; w < CONSUMERS; w++) {
        workers.add(
            pool.submit(
                () -> {
                  while (!stop.get()) {
                    try {
                      Target.Delivery d = target.pop(q, "bench", POP_BATCH, false, 1000);
                      if (d != null) {
                        target.ack(d);
                        consumed.addAndGet(d.size());
                      }
                    } catch (Exception e) {
                      errors.incrementAndGet();
                    }
                  }
                  return null;
                }));
      }
      long end = start + TimeUnit.MINUTES.toNanos(minutes);
      for (long next = start; next <= end; next += TimeUnit.SECONDS.toNanos(sampleSeconds)) {
        TimeUnit.NANOSECONDS.sleep(Math.max(0, next - System.nanoTime()));
        samples.add(Storage.total(db, "queen"));
      }
      stop.set(true);
      for (Future<?> f : workers) {
        f.get();
      }
    }
    double seconds = (System.nanoTime() - start) / 1e9;
    int atTwoMinutes = Math.min(samples.size() - 1, 120 / sampleSeconds);
    long last = samples.getLast();
    Map<String, Object> extra = new LinkedHashMap<>();
    extra.put("pushed/s", Math.round(pushed.get() / seconds));
    extra.put("schemaMBFirst", mb(samples.getFirst()));
    extra.put("schemaMBAt2min", mb(samples.get(atTwoMinutes)));
    extra.put("schemaMBLast", mb(last));
    extra.put("lastTo2min", Math.round(100.0 * last / samples.get(atTwoMinutes)) / 100.0);
    extra.put(
        "schemaMBEvery" + sampleSeconds + "s", samples.stream().map(RetentionRun::mb).toList());
    return new Result(
        retentionSeconds > 0 ? "retention-" + retentionSeconds + "s" : "retention-off",
        target.name(),
        Result.params(
            "minutes",
            minutes,
            "producers",
            PRODUCERS,
            "pushBatch",
            PUSH_BATCH,
            "consumers",
            CONSUMERS,
            "popBatch",
            POP_BATCH,
            "partitions",
            PARTITIONS),
        seconds,
        consumed.get(),
        consumed.get() / seconds,
        0,
        0,
        0,
        0,
        errors.get(),
        extra);
  }

  private static double mb(long bytes) {
    return Math.round(bytes / 104857.6) / 10.0;
  }
}
