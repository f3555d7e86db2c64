package queen.bench;

import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
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
 * Steady pushing and consuming for minutes against a broker of its own, once with a queue whose
 * retention is short and once without: with retention the size of the queen schema must level off,
 * and throughput must stay what it is without. Sampling starts after a minute of load; each sample
 * also records the push rate since the previous one and the messages retained, since the retained
 * volume follows the rate.
 */
final class RetentionRun {
  static final int PRODUCERS = 8;
  static final int PUSH_BATCH = 10;
  static final int CONSUMERS = 8;
  static final int POP_BATCH = 100;

  /**
   * Load before the first sample: the broker's JIT and pools settle, so the curve shows storage.
   */
  static final int WARM_UP_SECONDS = 60;

  private RetentionRun() {}

  /**
   * The load of a phase: pushes to a partition drawn at random from {@code partitions}, at {@code
   * pushesPerSecond} per producer (0: as fast as they go), reported as {@code name}.
   */
  record Shape(int partitions, double pushesPerSecond, String name) {}

  /**
   * One phase: pushes and pop+acks on one queue for {@code minutes}, sampling the schema's size and
   * the broker's resident memory every {@code sampleSeconds}, in the load's shape. Retention on
   * when {@code retentionSeconds} > 0.
   */
  static Result phase(
      BrokerTarget target,
      Jdbc db,
      long brokerPid,
      int minutes,
      int retentionSeconds,
      int sampleSeconds,
      Shape shape)
      throws Exception {
    String q = "bench-retention-" + Long.toString(System.currentTimeMillis(), 36);
    target.configure(
        q,
        retentionSeconds > 0
            ? "{\"leaseTime\":60,\"retentionEnabled\":true,\"retentionSeconds\":"
                + retentionSeconds
                + "}"
            : "{\"leaseTime\":60}");
    SteadyLoad load = new SteadyLoad(target, q, shape.partitions());
    AtomicLong pushed = load.pushed;
    List<Long> samples = new ArrayList<>();
    List<Long> retained = new ArrayList<>();
    List<Long> rates = new ArrayList<>();
    List<Long> rss = new ArrayList<>();
    List<Long> partitionRows = new ArrayList<>();
    List<Long> cursorRows = new ArrayList<>();
    long start = System.nanoTime();
    try (ExecutorService pool = Executors.newVirtualThreadPerTaskExecutor()) {
      List<Future<?>> workers = new ArrayList<>();
      for (int w = 0; w < PRODUCERS; w++) {
        workers.add(pool.submit(load.producer(PUSH_BATCH, shape.pushesPerSecond())));
      }
      for (int w = 0; w < CONSUMERS; w++) {
        workers.add(pool.submit(load.consumer("bench", POP_BATCH)));
      }
      TimeUnit.SECONDS.sleep(WARM_UP_SECONDS);
      long first = System.nanoTime();
      long end = first + TimeUnit.MINUTES.toNanos(minutes);
      long before = pushed.get();
      for (long next = first; next <= end; next += TimeUnit.SECONDS.toNanos(sampleSeconds)) {
        TimeUnit.NANOSECONDS.sleep(Math.max(0, next - System.nanoTime()));
        samples.add(Storage.total(db, "queen"));
        retained.add(retainedMessages(db));
        rss.add(Rss.now(brokerPid));
        partitionRows.add(count(db, "log_partitions"));
        cursorRows.add(count(db, "log_consumers"));
        long now = pushed.get();
        rates.add(next == first ? 0 : (now - before) / sampleSeconds);
        before = now;
      }
      load.stop();
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
    extra.put("pushedPerSecondEvery" + sampleSeconds + "s", rates);
    extra.put("retainedMessagesEvery" + sampleSeconds + "s", retained);
    // a broker that runs for weeks must not grow: its memory over the run, beside the schema's
    extra.put("brokerRssMBEvery" + sampleSeconds + "s", rss);
    extra.put("partitionRowsEvery" + sampleSeconds + "s", partitionRows);
    extra.put("cursorRowsEvery" + sampleSeconds + "s", cursorRows);
    extra.put("tableKBLast", kilobytes(Storage.sizes(db, "queen")));
    return new Result(
        shape.name(),
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
            shape.partitions(),
            "pushesPerSecondEach",
            shape.pushesPerSecond()),
        seconds,
        load.consumed.get(),
        load.consumed.get() / seconds,
        0,
        0,
        0,
        0,
        load.errors.get(),
        extra);
  }

  /** Messages stored now: from each partition's retention watermark to its newest offset. */
  private static long retainedMessages(Jdbc db) throws SQLException {
    try (Connection c = db.connection();
        Statement st = c.createStatement();
        ResultSet rs =
            st.executeQuery(
                "select coalesce(sum(last_offset + 1 - retained_from), 0)"
                    + " from queen.log_partitions")) {
      rs.next();
      return rs.getLong(1);
    }
  }

  /** The rows of one of the broker's tables now. */
  private static long count(Jdbc db, String table) throws SQLException {
    try (Connection c = db.connection();
        Statement st = c.createStatement();
        ResultSet rs = st.executeQuery("select count(*) from queen." + table)) {
      rs.next();
      return rs.getLong(1);
    }
  }

  private static Map<String, Long> kilobytes(Map<String, Long> sizes) {
    Map<String, Long> out = new LinkedHashMap<>();
    sizes.forEach(
        (table, bytes) -> {
          if (bytes >= 64 * 1024) {
            out.put(table, bytes / 1024);
          }
        });
    return out;
  }

  private static double mb(long bytes) {
    return Math.round(bytes / 104857.6) / 10.0;
  }
}
