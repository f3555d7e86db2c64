package queen.bench;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The admin routes under load: a queue of many partitions filled with a deep log, then pushes and
 * pop+acks running while one client walks the admin GETs in turn, timing each route.
 */
final class AdminRun {
  static final int FILL_PRODUCERS = 8;
  static final int FILL_BATCH = 100;
  static final int PRODUCERS = 4;
  static final int CONSUMERS = 4;

  /**
   * The GETs a dashboard makes; {q} is the queue, {g} the consumer group. {@code /health} first,
   * the floor: what the trivial request costs on the machine under the same load.
   */
  static final List<String> ROUTES =
      List.of(
          "/health",
          "/api/v1/resources/queues",
          "/api/v1/resources/overview",
          "/api/v1/resources/namespaces",
          "/api/v1/resources/partitions?queue={q}&limit=100",
          "/api/v1/status",
          "/api/v1/status/queues",
          "/api/v1/status/analytics?interval=minute",
          "/api/v1/analytics/queue-ops?queue={q}",
          "/api/v1/analytics/queue-lag?queue={q}",
          "/api/v1/analytics/retention",
          "/api/v1/analytics/queue-parked-replicas",
          "/api/v1/analytics/system-metrics",
          "/api/v1/analytics/worker-metrics",
          "/api/v1/analytics/postgres-stats",
          "/api/v1/status/queues/{q}/messages?limit=50",
          "/api/v1/consumer-groups",
          "/api/v1/consumer-groups/lagging?minLagSeconds=60",
          "/api/v1/messages?queue={q}&limit=200",
          "/api/v1/messages?queue={q}&partition=p7&limit=200",
          // the message list filtered by status, as the dashboard's filter asks for it
          "/api/v1/messages?queue={q}&status=pending&limit=200",
          "/api/v1/messages?queue={q}&status=completed&limit=200",
          "/api/v1/dlq?queue={q}&limit=100",
          "/api/v1/traces/names",
          "/api/v1/resources/queues/{q}",
          "/api/v1/status/queues/{q}",
          "/api/v1/consumer-groups/{g}",
          // the dashboard's queue page: the group's cursors of the partitions it shows
          "/api/v1/consumer-groups/{g}?queue={q}&partitionFrom=p5000&limit=100");

  private AdminRun() {}

  /**
   * Fills a new queue, or with {@code queue} set measures on that existing queue (filled by an
   * earlier run) without filling. The producers push {@code pushRate} messages a second between
   * them and the consumers pop (100 at a time) as many, or both go as fast as they can when it is
   * 0. The first {@code warmup} seconds of load and walks are not measured.
   */
  static Result run(
      String url,
      String queue,
      int partitions,
      long messages,
      int warmup,
      int seconds,
      int pushRate)
      throws Exception {
    String q =
        queue != null ? queue : "bench-admin-" + Long.toString(System.currentTimeMillis(), 36);
    String group = "bench";
    try (BrokerTarget target = new BrokerTarget(url);
        Http1 admin = new Http1(url)) {
      long fillStart = System.nanoTime();
      if (queue == null) {
        target.configure(q, "{\"leaseTime\":60}");
        fill(target, q, partitions, messages);
        // the group reads before the first walk: its routes answer 404 until it has cursors
        Target.Delivery first = target.pop(q, group, 100, false, 1000);
        if (first != null) {
          target.ack(first);
        }
      }
      double fillSeconds = (System.nanoTime() - fillStart) / 1e9;

      SteadyLoad load = new SteadyLoad(target, q, partitions);
      Map<String, Recorder> perRoute = new LinkedHashMap<>();
      long start = System.nanoTime();
      long measureFrom = start + TimeUnit.SECONDS.toNanos(warmup);
      for (String r : ROUTES) {
        perRoute.put(r, new Recorder(measureFrom));
      }
      long adminErrors = 0;
      try (ExecutorService pool = Executors.newVirtualThreadPerTaskExecutor()) {
        List<Future<?>> workers = new ArrayList<>();
        for (int w = 0; w < PRODUCERS; w++) {
          workers.add(pool.submit(load.producer(10, pushRate / 10.0 / PRODUCERS)));
        }
        for (int w = 0; w < CONSUMERS; w++) {
          workers.add(pool.submit(load.consumer(group, 100, pushRate / 100.0 / CONSUMERS)));
        }
        long end = measureFrom + TimeUnit.SECONDS.toNanos(seconds);
        while (System.nanoTime() < end) {
          for (String r : ROUTES) {
            String path = r.replace("{q}", q).replace("{g}", group);
            long t0 = System.nanoTime();
            Http1.Response res = admin.get(path, 60_000);
            if (res.status() == 200) {
              perRoute.get(r).request(t0, 1);
            } else {
              perRoute.get(r).error();
              adminErrors++;
            }
          }
        }
        load.stop();
        for (Future<?> f : workers) {
          f.get();
        }
      }
      long stopped = System.nanoTime();
      double loadSeconds = (stopped - start) / 1e9;
      double measuredSeconds = (stopped - measureFrom) / 1e9;
      Map<String, Object> extra = new LinkedHashMap<>();
      extra.put("fillSeconds", Math.round(fillSeconds));
      extra.put("pushedPerSecond", Math.round(load.pushed.get() / loadSeconds));
      extra.put("consumedPerSecond", Math.round(load.consumed.get() / loadSeconds));
      Map<String, String> latencies = new LinkedHashMap<>();
      long worstP99 = 0;
      long requests = 0;
      for (Map.Entry<String, Recorder> e : perRoute.entrySet()) {
        Recorder rec = e.getValue();
        requests += rec.requests();
        worstP99 = Math.max(worstP99, rec.percentile(99));
        latencies.put(
            e.getKey(),
            String.format(
                "n=%d p50=%.1fms p99=%.1fms",
                rec.requests(), rec.percentile(50) / 1000.0, rec.percentile(99) / 1000.0));
      }
      extra.put("routes", latencies);
      return new Result(
          "admin",
          target.name(),
          Result.params(
              "partitions",
              partitions,
              "messages",
              messages,
              "warmup",
              warmup,
              "seconds",
              seconds,
              "pushRate",
              pushRate,
              "producers",
              PRODUCERS,
              "consumers",
              CONSUMERS),
          measuredSeconds,
          requests,
          requests / measuredSeconds,
          requests,
          0,
          worstP99,
          0,
          adminErrors + load.errors.get(),
          extra);
    }
  }

  /** Pushes {@code messages} over every partition, 10 per partition per push of 100. */
  private static void fill(BrokerTarget target, String q, int partitions, long messages)
      throws Exception {
    AtomicLong next = new AtomicLong();
    try (ExecutorService pool = Executors.newVirtualThreadPerTaskExecutor()) {
      List<Future<?>> workers = new ArrayList<>();
      for (int w = 0; w < FILL_PRODUCERS; w++) {
        workers.add(
            pool.submit(
                () -> {
                  long request;
                  while ((request = next.getAndIncrement()) * FILL_BATCH < messages) {
                    List<Target.Message> batch = new ArrayList<>(FILL_BATCH);
                    for (int i = 0; i < FILL_BATCH; i++) {
                      int p = (int) ((request * (FILL_BATCH / 10) + i / 10) % partitions);
                      batch.add(
                          new Target.Message("p" + p, "f" + request + "-" + i, Payloads.of(30, 0)));
                    }
                    target.push(q, batch);
                  }
                  return null;
                }));
      }
      for (Future<?> f : workers) {
        f.get();
      }
    }
  }
}
