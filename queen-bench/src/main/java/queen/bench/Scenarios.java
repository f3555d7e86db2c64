package queen.bench;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Semaphore;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;

/** The measured workloads. Each prepares its own queue, so runs do not disturb each other. */
final class Scenarios {
  private final Target target;
  private final int warmup;
  private final int seconds;
  private final Fill fill;
  private final String runId = Long.toString(System.currentTimeMillis(), 36);

  Scenarios(Target target, int warmup, int seconds) {
    this(target, warmup, seconds, Fill.DEFAULT);
  }

  Scenarios(Target target, int warmup, int seconds, Fill fill) {
    this.target = target;
    this.warmup = warmup;
    this.seconds = seconds;
    this.fill = fill;
  }

  /** These scenarios with their backlogs pushed as {@code f} says. */
  Scenarios filling(Fill f) {
    return new Scenarios(target, warmup, seconds, f);
  }

  private String queue(String scenario) {
    return "bench-" + scenario + "-" + runId + "-" + ThreadLocalRandom.current().nextInt(1000);
  }

  /**
   * Producers push batches as fast as answers come back. Each batch goes to one partition chosen at
   * random, the shape a keyed producer has.
   */
  Result push(String name, int producers, int batch, int partitions, int payload) throws Exception {
    String q = queue(name);
    target.prepare(q, partitions);
    Run run = new Run(warmup, seconds);
    AtomicLong ids = new AtomicLong();
    long end =
        run.workers(
            producers,
            w -> {
              List<Target.Message> msgs = batch(q, ids, batch, partitions, payload, true);
              long t0 = System.nanoTime();
              target.push(q, msgs);
              run.recorder.request(t0, msgs.size());
              return true;
            });
    return Result.of(
        name,
        target.name(),
        Result.params(
            "producers", producers, "batch", batch, "partitions", partitions, "payload", payload),
        run.recorder,
        end,
        Map.of());
  }

  /**
   * Consumers pop and ack (or autoAck) batches from a standing backlog; the run ends early when the
   * backlog is drained.
   */
  Result popAck(String name, int consumers, int batch, int partitions, int backlog, boolean autoAck)
      throws Exception {
    String q = queue(name);
    target.prepare(q, partitions);
    fill(q, partitions, backlog);
    if (target instanceof CeilingTarget c) {
      c.prepareGroup(q, "bench");
    }
    Run run = new Run(warmup, seconds);
    AtomicLong consumed = new AtomicLong();
    long calls0 = target instanceof BrokerTarget b ? b.dbCalls() : 0;
    long consumed0 = consumed.get();
    long end =
        run.workers(
            consumers,
            w -> {
              long t0 = System.nanoTime();
              Target.Delivery d = target.pop(q, "bench", batch, autoAck, 0);
              if (d == null) {
                return consumed.get() < backlog;
              }
              if (!autoAck) {
                target.ack(d);
              }
              consumed.addAndGet(d.size());
              run.recorder.request(t0, d.size());
              return true;
            });
    return Result.of(
        name,
        target.name(),
        Result.params(
            "consumers",
            consumers,
            "batch",
            batch,
            "partitions",
            partitions,
            "backlog",
            backlog,
            "autoAck",
            autoAck),
        run.recorder,
        end,
        target instanceof BrokerTarget b
            ? Map.of(
                "dbCallsPerMessage",
                Math.round(
                        1000.0 * (b.dbCalls() - calls0) / Math.max(1, consumed.get() - consumed0))
                    / 1000.0)
            : Map.of());
  }

  /** Producers and consumers at once on one queue; a result for each side. */
  List<Result> mixed(
      String name,
      int producers,
      int pushBatch,
      int consumers,
      int popBatch,
      int partitions,
      boolean autoAck)
      throws Exception {
    String q = queue(name);
    target.prepare(q, partitions);
    if (target instanceof CeilingTarget c) {
      c.prepareGroup(q, "bench");
    }
    Run pushes = new Run(warmup, seconds);
    Run pops = new Run(warmup, seconds);
    AtomicLong ids = new AtomicLong();
    long[] ends = new long[2];
    try (ExecutorService both = Executors.newVirtualThreadPerTaskExecutor()) {
      var p =
          both.submit(
              () ->
                  ends[0] =
                      pushes.workers(
                          producers,
                          w -> {
                            List<Target.Message> msgs =
                                batch(q, ids, pushBatch, partitions, 30, true);
                            long t0 = System.nanoTime();
                            target.push(q, msgs);
                            pushes.recorder.request(t0, msgs.size());
                            return true;
                          }));
      var c =
          both.submit(
              () ->
                  ends[1] =
                      pops.workers(
                          consumers,
                          w -> {
                            long t0 = System.nanoTime();
                            Target.Delivery d = target.pop(q, "bench", popBatch, autoAck, 1000);
                            if (d != null) {
                              if (!autoAck) {
                                target.ack(d);
                              }
                              pops.recorder.request(t0, d.size());
                            }
                            return true;
                          }));
      p.get();
      c.get();
    }
    Map<String, Object> params =
        Result.params(
            "producers",
            producers,
            "pushBatch",
            pushBatch,
            "consumers",
            consumers,
            "popBatch",
            popBatch,
            "partitions",
            partitions,
            "autoAck",
            autoAck);
    return List.of(
        Result.of(name + ":push", target.name(), params, pushes.recorder, ends[0], Map.of()),
        Result.of(name + ":pop", target.name(), params, pops.recorder, ends[1], Map.of()));
  }

  /** One producer stream read by several consumer groups, each at its own pace. */
  Result fanOut(int groups, int batch, int partitions) throws Exception {
    String q = queue("fan-out");
    target.prepare(q, partitions);
    Run run = new Run(warmup, seconds);
    AtomicLong ids = new AtomicLong();
    Map<String, AtomicLong> perGroup = new ConcurrentHashMap<>();
    AtomicLong produced = new AtomicLong();
    long end =
        run.workers(
            1 + groups,
            w -> {
              if (w == 0) {
                target.push(q, batch(q, ids, batch, partitions, 30, true));
                if (run.recorder.measuring(System.nanoTime())) {
                  produced.addAndGet(batch);
                }
                return true;
              }
              String group = "group-" + w;
              long t0 = System.nanoTime();
              Target.Delivery d = target.pop(q, group, 100, false, 1000);
              if (d != null) {
                target.ack(d);
                perGroup.computeIfAbsent(group, g -> new AtomicLong()).addAndGet(d.size());
                run.recorder.request(t0, d.size());
              }
              return true;
            });
    double s = run.recorder.seconds(end);
    long slowest = perGroup.values().stream().mapToLong(AtomicLong::get).min().orElse(0);
    return Result.of(
        "fan-out",
        target.name(),
        Result.params("groups", groups, "batch", batch, "partitions", partitions),
        run.recorder,
        end,
        Result.params(
            "produced/s",
            Math.round(produced.get() / s),
            "slowestGroup/s",
            Math.round(slowest / s)));
  }

  /**
   * The mixed shape's throughput first (20 producers batch 10, consumers batch 100), then {@link
   * #latency} at each fraction of it; results named {@code <label>-max:...} and {@code
   * <label>-<percent>pct}.
   */
  List<Result> latencyAtFractions(String label, double[] fractions, int consumers, int partitions)
      throws Exception {
    List<Result> max = mixed(label + "-max", 20, 10, consumers, 100, partitions, false);
    double capacity = Math.min(max.get(0).rate(), max.get(1).rate());
    List<Result> out = new ArrayList<>(max);
    for (double f : fractions) {
      out.add(
          latency(label + "-" + Math.round(f * 100) + "pct", capacity * f, consumers, partitions));
    }
    return out;
  }

  /**
   * End-to-end latency, from the push's response to the pop's response that delivers the message,
   * with producers throttled to {@code rate} messages per second and consumers long-polling.
   */
  Result latency(String name, double rate, int consumers, int partitions) throws Exception {
    String q = queue(name);
    target.prepare(q, partitions);
    if (target instanceof CeilingTarget c) {
      c.prepareGroup(q, "bench");
    }
    Map<String, Long> pushedAt = new ConcurrentHashMap<>();
    Run run = new Run(warmup, seconds);
    AtomicLong ids = new AtomicLong();
    AtomicLong produced = new AtomicLong();
    AtomicLong skipped = new AtomicLong();
    int batch = 10;
    // open loop: pushes leave on a fixed schedule whatever the broker's latency, up to 256 in
    // flight; a send that finds all 256 busy is skipped and counted
    long interval = (long) (TimeUnit.SECONDS.toNanos(1) * batch / rate);
    Semaphore inFlight = new Semaphore(256);
    long[] due = {0};
    long end;
    try (ExecutorService senders = Executors.newVirtualThreadPerTaskExecutor()) {
      end =
          run.workers(
              1 + consumers,
              w -> {
                if (w == 0) {
                  due[0] = due[0] == 0 ? System.nanoTime() : due[0] + interval;
                  LockSupport.parkNanos(due[0] - System.nanoTime());
                  if (!inFlight.tryAcquire()) {
                    skipped.incrementAndGet();
                    return true;
                  }
                  senders.submit(
                      () -> {
                        try {
                          List<Target.Message> msgs = batch(q, ids, batch, partitions, 30, true);
                          target.push(q, msgs);
                          long now = System.nanoTime();
                          for (Target.Message m : msgs) {
                            pushedAt.put(m.id(), now);
                          }
                          produced.addAndGet(msgs.size());
                        } catch (Exception e) {
                          run.recorder.error();
                        } finally {
                          inFlight.release();
                        }
                        return null;
                      });
                  return true;
                }
                Target.Delivery d = target.pop(q, "bench", 100, false, 1000);
                if (d != null) {
                  long now = System.nanoTime();
                  target.ack(d);
                  for (Target.Delivered m : d.messages()) {
                    Long at = pushedAt.remove(m.id());
                    if (at != null) {
                      run.recorder.latency(now - at);
                    }
                  }
                  run.recorder.messages(d.size());
                }
                return true;
              });
    }
    double pushedPerSecond = produced.get() / ((end - run.start) / 1e9);
    return Result.of(
        name,
        target.name(),
        Result.params("rate", Math.round(rate), "consumers", consumers, "partitions", partitions),
        run.recorder,
        end,
        Result.params(
            "latency",
            "push response to pop response",
            "pushed/s",
            Math.round(pushedPerSecond),
            "skippedSends",
            skipped.get()));
  }

  /**
   * Pushes {@code total} messages over the partitions in pushes of up to {@link Fill#batch}
   * messages each (100 by default), one partition per push: the backlog a keyed producer with a
   * large batch leaves.
   */
  void fill(String q, int partitions, int total) throws Exception {
    int perPartition = Math.max(1, total / partitions);
    AtomicLong next = new AtomicLong();
    try (ExecutorService pool = Executors.newVirtualThreadPerTaskExecutor()) {
      List<java.util.concurrent.Future<?>> all = new ArrayList<>();
      for (int w = 0; w < 8; w++) {
        all.add(
            pool.submit(
                () -> {
                  for (long p = next.getAndIncrement();
                      p < partitions;
                      p = next.getAndIncrement()) {
                    for (int done = 0; done < perPartition; done += fill.batch()) {
                      int n = Math.min(fill.batch(), perPartition - done);
                      List<Target.Message> msgs = new ArrayList<>(n);
                      for (int i = 0; i < n; i++) {
                        byte[] payload =
                            fill.random()
                                ? Payloads.random(fill.payload())
                                : Payloads.of(fill.payload(), 0);
                        msgs.add(
                            new Target.Message("p" + p, "fill-" + p + "-" + (done + i), payload));
                      }
                      target.push(q, msgs);
                    }
                  }
                  return null;
                }));
      }
      for (var f : all) {
        f.get();
      }
    }
  }

  /** Messages with unique ids, all to one random partition, or each to its own when spread. */
  private List<Target.Message> batch(
      String q, AtomicLong ids, int size, int partitions, int payload, boolean onePartition) {
    ThreadLocalRandom rnd = ThreadLocalRandom.current();
    String partition = "p" + rnd.nextInt(partitions);
    List<Target.Message> msgs = new ArrayList<>(size);
    long now = System.nanoTime();
    for (int i = 0; i < size; i++) {
      String p = onePartition ? partition : "p" + rnd.nextInt(partitions);
      msgs.add(
          new Target.Message(p, runId + "-" + ids.getAndIncrement(), Payloads.of(payload, now)));
    }
    return msgs;
  }
}
