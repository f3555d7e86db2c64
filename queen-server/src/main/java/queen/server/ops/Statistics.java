package queen.server.ops;

import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.atomic.LongAdder;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import queen.server.store.StatsStore;

/**
 * The statistics behind the status routes, kept off the hot path: pushes, deliveries and acks count
 * into memory, and every interval this broker adds its counts to the per-minute rows in one
 * statement with a sample of itself (memory, CPU, pool, parked long-polls), and one broker of the
 * cluster (a claim in the database) refreshes the per-queue snapshot of message counts and lag.
 * Counts not yet flushed when a broker dies are lost; the snapshot does not depend on them (it is
 * recomputed from the log).
 */
public final class Statistics implements AutoCloseable {
  private static final Logger log = LoggerFactory.getLogger(Statistics.class);

  private static final int PUSHED = 0;
  private static final int POPPED = 1;
  private static final int ACKED = 2;
  private static final int FAILED = 3;
  private static final int DEAD = 4;
  private static final int RETAINED = 5;

  private final StatsStore store;
  private final BrokerSampler sampler;
  private final Duration interval;
  private final Map<String, LongAdder[]> counts = new ConcurrentHashMap<>();

  /**
   * Counters of queues idle for a tick, taken out of {@link #counts} by the last tick: read once
   * more by the next, for a count added by a thread that found them just before.
   */
  private List<Map.Entry<String, LongAdder[]>> retired = List.of();

  private ScheduledExecutorService timer;

  public Statistics(StatsStore store, BrokerSampler sampler, Duration interval) {
    this.store = store;
    this.sampler = sampler;
    this.interval = interval;
  }

  public synchronized void start() {
    if (timer == null) {
      timer = Periodic.every("queen-statistics", interval, this::tickQuietly);
    }
  }

  public void pushed(String queue, long n) {
    add(queue, PUSHED, n);
  }

  /** Every message a pop delivered. */
  public void delivered(List<String> queues) {
    for (String q : queues) {
      add(q, POPPED, 1);
    }
  }

  /** One acknowledgement the broker accepted, by its status. */
  public void acknowledged(String queue, String status, boolean deadLettered) {
    acknowledged(queue, status, deadLettered, 1);
  }

  /** An acknowledgement of {@code n} messages at once (a stream cycle's), by its status. */
  public void acknowledged(String queue, String status, boolean deadLettered, long n) {
    if (deadLettered) {
      add(queue, DEAD, n);
    } else {
      add(queue, "completed".equals(status) || "success".equals(status) ? ACKED : FAILED, n);
    }
  }

  /** Messages moved to the queue's dead letters outside an ack (maxWaitTimeSeconds). */
  public void deadLettered(String queue, long n) {
    add(queue, DEAD, n);
  }

  /** Messages retention deleted from the queue. */
  public void retained(String queue, long n) {
    add(queue, RETAINED, n);
  }

  private void add(String queue, int kind, long n) {
    if (n > 0) {
      counts.computeIfAbsent(queue, q -> newCounters())[kind].add(n);
    }
  }

  private static LongAdder[] newCounters() {
    LongAdder[] a = new LongAdder[6];
    for (int i = 0; i < a.length; i++) {
      a[i] = new LongAdder();
    }
    return a;
  }

  /**
   * Adds this broker's counts to the minute rows and refreshes the snapshot if it is this broker's
   * turn, in one database call.
   */
  public synchronized void tick() {
    List<StatsStore.Counts> batch = drain();
    long pushed = 0;
    long popped = 0;
    long acked = 0;
    for (StatsStore.Counts c : batch) {
      pushed += c.pushed();
      popped += c.popped();
      acked += c.acked();
    }
    try {
      if (store.tick(batch, sampler.sample(pushed, popped, acked), interval.toMillis()) == -2) {
        log.warn("statistics snapshot refresh failed; the counts are stored (PostgreSQL's log)");
      }
    } catch (RuntimeException e) {
      restore(batch); // the database is away: count them into the next tick
      throw e;
    }
  }

  /** Refreshes the snapshot now, whoever's turn it is (it is computed from the log alone). */
  public int refreshNow() {
    return store.refresh();
  }

  /**
   * This tick's counts, one per queue. A queue with nothing to count since the last tick leaves the
   * map, so a broker that saw queues come and go (one per job, say) does not keep a counter of
   * each.
   */
  private List<StatsStore.Counts> drain() {
    Map<String, long[]> sums = new LinkedHashMap<>();
    for (Map.Entry<String, LongAdder[]> e : retired) {
      drain(e.getKey(), e.getValue(), sums);
    }
    List<Map.Entry<String, LongAdder[]>> idle = new ArrayList<>();
    for (Map.Entry<String, LongAdder[]> e : counts.entrySet()) {
      if (!drain(e.getKey(), e.getValue(), sums) && counts.remove(e.getKey(), e.getValue())) {
        idle.add(Map.entry(e.getKey(), e.getValue()));
      }
    }
    retired = idle;
    List<StatsStore.Counts> batch = new ArrayList<>(sums.size());
    // one row per queue: the statement adding them would update a minute's row twice otherwise
    sums.forEach((q, v) -> batch.add(new StatsStore.Counts(q, v[0], v[1], v[2], v[3], v[4], v[5])));
    return batch;
  }

  /** Adds the queue's counts to its sums and zeroes them; false when there were none. */
  private static boolean drain(String queue, LongAdder[] a, Map<String, long[]> sums) {
    long[] v = new long[a.length];
    boolean any = false;
    for (int i = 0; i < a.length; i++) {
      v[i] = a[i].sumThenReset();
      any |= v[i] != 0;
    }
    if (any) {
      long[] sum = sums.computeIfAbsent(queue, q -> new long[a.length]);
      for (int i = 0; i < v.length; i++) {
        sum[i] += v[i];
      }
    }
    return any;
  }

  /** Queues with counters now. */
  int queuesCounted() {
    return counts.size();
  }

  private void restore(List<StatsStore.Counts> batch) {
    for (StatsStore.Counts c : batch) {
      add(c.queue(), PUSHED, c.pushed());
      add(c.queue(), POPPED, c.popped());
      add(c.queue(), ACKED, c.acked());
      add(c.queue(), FAILED, c.failed());
      add(c.queue(), DEAD, c.deadLettered());
      add(c.queue(), RETAINED, c.retentionDeleted());
    }
  }

  private void tickQuietly() {
    try {
      tick();
    } catch (RuntimeException e) {
      Periodic.failed(log, "statistics not written", interval, e);
    }
  }

  @Override
  public synchronized void close() {
    timer = Periodic.stop(timer);
    try {
      tick();
    } catch (RuntimeException e) {
      log.warn("last statistics not written: {}", e.getMessage());
    }
  }
}
