package queen.server.http;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.time.Duration;
import java.time.InstantSource;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.function.BiPredicate;
import java.util.function.Function;
import queen.server.http.auth.Access;
import queen.server.store.AnalyticsStore;
import queen.server.store.AnalyticsStore.BrokerMinute;
import queen.server.store.AnalyticsStore.QueueMinute;
import queen.server.store.StatsStore;

/**
 * {@code /api/v1/analytics/*} (WIRE.md section 15): per-minute series by queue (operations, lag,
 * retention) and by broker (process figures, work, parked long-polls), read from the rows the
 * statistics tick writes every QUEEN_STATS_INTERVAL_MS and keeps seven days; and PostgreSQL's own
 * statistics of the database, read live. Windows default to the last hour.
 */
public final class AnalyticsRoutes implements Routes {
  private static final Duration DEFAULT_WINDOW = Duration.ofHours(1);

  /**
   * The most queue minutes, or broker minutes, one answer holds: 69 queues (or brokers) over a day,
   * 9 over a week.
   */
  static final int MAX_POINTS = 100_000;

  private final AnalyticsStore store;
  private final InstantSource clock;

  public AnalyticsRoutes(AnalyticsStore store, InstantSource clock) {
    this.store = store;
    this.clock = clock;
  }

  @Override
  public void declare(RouteTable rules) {
    rules.get("/api/v1/analytics/queue-ops", Access.READ_ONLY, this::queueOps);
    rules.get("/api/v1/analytics/queue-lag", Access.READ_ONLY, this::queueLag);
    rules.get("/api/v1/analytics/retention", Access.READ_ONLY, this::retention);
    rules.get("/api/v1/analytics/queue-parked-replicas", Access.READ_ONLY, this::parked);
    rules.get("/api/v1/analytics/system-metrics", Access.READ_ONLY, this::system);
    rules.get("/api/v1/analytics/worker-metrics", Access.READ_ONLY, this::worker);
    rules.get("/api/v1/analytics/postgres-stats", Access.READ_ONLY, this::postgres);
  }

  private ObjectNode header(TimeWindow w) {
    return Json.object()
        .put("from", Json.millis(w.from()))
        .put("to", Json.millis(w.to()))
        .put("interval", "minute");
  }

  /** Per queue, oldest minute first; {@code point} fills one point or answers false to skip it. */
  private void byQueue(Request req, Response res, BiPredicate<QueueMinute, ObjectNode> point) {
    Params p = new Params(req);
    TimeWindow w = TimeWindow.of(p, clock.instant(), DEFAULT_WINDOW);
    List<QueueMinute> minutes =
        store.queueMinutes(p.optional("queue"), w.from(), w.to(), MAX_POINTS + 1);
    if (minutes.size() > MAX_POINTS) {
      // every queue's minutes of a week, read whole and answered as one tree, could take the heap
      throw ApiException.badRequest(
          "more than "
              + MAX_POINTS
              + " queue minutes in this window: name a queue or narrow from and to");
    }
    Map<String, ArrayNode> series = new LinkedHashMap<>();
    ObjectNode body = header(w);
    ArrayNode queues = body.putArray("queues");
    for (QueueMinute m : minutes) {
      ArrayNode points =
          series.computeIfAbsent(
              m.queue(), q -> queues.addObject().put("queue", q).putArray("points"));
      ObjectNode pt = Json.object().put("timestamp", Json.millis(m.minute()));
      if (point.test(m, pt)) {
        points.add(pt);
      }
    }
    Replies.json(res, 200, body);
  }

  private void queueOps(Request req, Response res) {
    byQueue(
        req,
        res,
        (m, pt) -> {
          pt.put("pushed", m.pushed())
              .put("popped", m.popped())
              .put("acked", m.acked())
              .put("failed", m.failed())
              .put("deadLettered", m.deadLettered());
          return true;
        });
  }

  private void queueLag(Request req, Response res) {
    byQueue(
        req,
        res,
        (m, pt) -> {
          pt.put("lagMessages", m.lagMessages()).put("maxLagSeconds", m.maxLagSeconds());
          return m.lagMessages() != null;
        });
  }

  private void retention(Request req, Response res) {
    byQueue(
        req,
        res,
        (m, pt) -> {
          pt.put("deletedMessages", m.retentionDeleted());
          return m.retentionDeleted() > 0;
        });
  }

  private List<BrokerMinute> brokers(Params p, TimeWindow w) {
    List<BrokerMinute> minutes =
        store.brokerMinutes(
            p.optional("workerId"), p.optional("hostname"), w.from(), w.to(), MAX_POINTS + 1);
    if (minutes.size() > MAX_POINTS) {
      // a week of many brokers' minutes, each with its parked long-polls by queue, read whole and
      // answered as one tree, could take the heap
      throw ApiException.badRequest(
          "more than "
              + MAX_POINTS
              + " broker minutes in this window: name a workerId or hostname, or narrow from and"
              + " to");
    }
    return minutes;
  }

  /** Per broker, oldest minute first, with {@code point} filling each point. */
  private void byBroker(
      Request req, Response res, Function<StatsStore.BrokerSample, ObjectNode> point) {
    Params p = new Params(req);
    TimeWindow w = TimeWindow.of(p, clock.instant(), DEFAULT_WINDOW);
    ObjectNode body = header(w);
    ArrayNode replicas = body.putArray("replicas");
    Map<String, ArrayNode> series = new LinkedHashMap<>();
    for (BrokerMinute m : brokers(p, w)) {
      StatsStore.BrokerSample b = m.sample();
      series
          .computeIfAbsent(
              b.brokerId(),
              id ->
                  replicas
                      .addObject()
                      .put("workerId", id)
                      .put("hostname", b.hostname())
                      .put("startedAt", Json.millis(b.startedAt()))
                      .putArray("points"))
          .add(point.apply(b).put("timestamp", Json.millis(m.minute())));
    }
    Replies.json(res, 200, body);
  }

  private void system(Request req, Response res) {
    byBroker(
        req,
        res,
        m ->
            Json.object()
                .put("rssBytes", m.rssBytes())
                .put("heapUsedBytes", m.heapUsedBytes())
                .put("heapCommittedBytes", m.heapCommittedBytes())
                .put("cpuPercent", m.cpuPercent())
                .put("threads", m.threads()));
  }

  private void worker(Request req, Response res) {
    byBroker(
        req,
        res,
        m -> {
          int parked = m.parked().values().stream().mapToInt(Integer::intValue).sum();
          return Json.object()
              .put("pushed", m.pushed())
              .put("popped", m.popped())
              .put("acked", m.acked())
              .put("dbPoolActive", m.pool().active())
              .put("dbPoolIdle", m.pool().idle())
              .put("dbPoolWaiting", m.pool().waiting())
              .put("parked", parked);
        });
  }

  /** Per queue and broker: the long-polls parked at each minute's last sample. */
  private void parked(Request req, Response res) {
    Params p = new Params(req);
    TimeWindow w = TimeWindow.of(p, clock.instant(), DEFAULT_WINDOW);
    String only = p.optional("queue");
    Map<String, Map<String, ArrayNode>> byQueue = new TreeMap<>();
    Map<String, String> hosts = new LinkedHashMap<>();
    for (BrokerMinute m : brokers(p, w)) {
      StatsStore.BrokerSample b = m.sample();
      hosts.put(b.brokerId(), b.hostname());
      b.parked()
          .forEach(
              (queue, n) -> {
                if (only == null || only.equals(queue)) {
                  byQueue
                      .computeIfAbsent(queue, q -> new TreeMap<>())
                      .computeIfAbsent(b.brokerId(), id -> Json.MAPPER.createArrayNode())
                      .addObject()
                      .put("timestamp", Json.millis(m.minute()))
                      .put("parked", n);
                }
              });
    }
    ObjectNode body = header(w);
    ArrayNode queues = body.putArray("queues");
    byQueue.forEach(
        (queue, brokers) -> {
          ArrayNode replicas = queues.addObject().put("queue", queue).putArray("replicas");
          brokers.forEach(
              (broker, points) ->
                  replicas
                      .addObject()
                      .put("workerId", broker)
                      .put("hostname", hosts.get(broker))
                      .set("points", points));
        });
    Replies.json(res, 200, body);
  }

  private void postgres(Request req, Response res) {
    AnalyticsStore.PostgresStats s = store.postgres();
    ObjectNode body =
        Json.object()
            .put("at", Json.millis(clock.instant()))
            .put("version", s.version())
            .put("database", s.database())
            .put("sizeBytes", s.sizeBytes())
            .put("autovacuum", s.autovacuum())
            .put("deadlocks", s.deadlocks())
            .put("tempBytes", s.tempBytes());
    ObjectNode connections = body.putObject("connections");
    s.connections().forEach(connections::put);
    body.putObject("transactions")
        .put("committed", s.committed())
        .put("rolledBack", s.rolledBack());
    long reads = s.blocksHit() + s.blocksRead();
    body.putObject("cache")
        .put("blocksHit", s.blocksHit())
        .put("blocksRead", s.blocksRead())
        .put("hitRatio", reads == 0 ? null : (double) s.blocksHit() / reads);
    ArrayNode tables = body.putArray("tables");
    for (AnalyticsStore.TableStats t : s.tables()) {
      tables
          .addObject()
          .put("name", t.name())
          .put("totalBytes", t.totalBytes())
          .put("liveRows", t.liveRows())
          .put("deadRows", t.deadRows())
          .put("updates", t.updates())
          .put("hotUpdates", t.hotUpdates())
          .put("lastVacuum", Json.millisOrNull(t.lastVacuum()))
          .put("lastAutovacuum", Json.millisOrNull(t.lastAutovacuum()));
    }
    Replies.json(res, 200, body);
  }
}
