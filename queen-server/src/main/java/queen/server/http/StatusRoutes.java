package queen.server.http;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.time.Duration;
import java.time.Instant;
import java.time.InstantSource;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import queen.server.http.auth.Access;
import queen.server.ops.Statistics;
import queen.server.push.BufferedPush;
import queen.server.store.Database;
import queen.server.store.DeadLetterStore;
import queen.server.store.MessageStore;
import queen.server.store.ResourceStore;
import queen.server.store.StatsStore;

/**
 * The status and analytics routes of WIRE.md section 15, read by dashboards. Time series come from
 * the per-minute statistics rows (each broker adds its counts every {@code
 * QUEEN_STATS_INTERVAL_MS}); queue counts from the snapshot one broker refreshes as often ({@code
 * statsAge} says how old it is); a queue's partitions are computed live.
 */
public final class StatusRoutes implements Routes {
  private final StatsStore stats;
  private final Statistics statistics;
  private final ResourceStore resources;
  private final MessageStore messages;
  private final DeadLetterStore deadLetters;
  private final Database db;
  private final InstantSource clock;
  private final BufferedPush pushes;

  public StatusRoutes(
      StatsStore stats,
      Statistics statistics,
      ResourceStore resources,
      MessageStore messages,
      DeadLetterStore deadLetters,
      Database db,
      InstantSource clock,
      BufferedPush pushes) {
    this.pushes = pushes;
    this.stats = stats;
    this.statistics = statistics;
    this.resources = resources;
    this.messages = messages;
    this.deadLetters = deadLetters;
    this.db = db;
    this.clock = clock;
  }

  @Override
  public void declare(RouteTable rules) {
    rules.get("/api/v1/status", Access.READ_ONLY, this::status);
    rules.get("/api/v1/status/queues", Access.READ_ONLY, this::queues);
    rules.get("/api/v1/status/analytics", Access.READ_ONLY, this::analytics);
    rules.get("/api/v1/status/buffers", Access.READ_ONLY, this::buffers);
    rules.get("/api/v1/status/queues/{queue}", Access.READ_ONLY, this::queue);
    rules.get("/api/v1/status/queues/{queue}/messages", Access.READ_ONLY, this::queueMessages);
    rules.post("/api/v1/stats/refresh", Access.ADMIN, this::refresh);
  }

  private void status(Request req, Response res) {
    Params p = new Params(req);
    Instant now = clock.instant();
    TimeWindow w = TimeWindow.of(p, now, Duration.ofHours(1));
    int bucket = (int) Math.max(1, (w.minutes() + 119) / 120);
    String queue = p.optional("queue");
    String namespace = p.optional("namespace");
    String task = p.optional("task");
    List<StatsStore.Point> points = stats.series(queue, namespace, task, w.from(), w.to(), bucket);
    ObjectNode body = Json.object();
    body.putObject("timeRange").put("from", Json.millis(w.from())).put("to", Json.millis(w.to()));
    body.put("bucketMinutes", bucket);
    body.put("pointCount", points.size());
    ArrayNode throughput = body.putArray("throughput");
    long acked = 0;
    long failed = 0;
    double seconds = bucket * 60.0;
    for (StatsStore.Point pt : points) {
      acked += pt.acked();
      failed += pt.failed();
      ObjectNode n = throughput.addObject();
      n.put("timestamp", Json.millis(pt.at()));
      n.put("ingested", pt.pushed());
      n.put("processed", pt.acked());
      n.put("popMessages", pt.popped());
      n.put("failed", pt.failed());
      n.put("deadLettered", pt.deadLettered());
      n.put("ingestedPerSecond", rate(pt.pushed(), seconds));
      n.put("processedPerSecond", rate(pt.acked(), seconds));
      n.put("popPerSecond", rate(pt.popped(), seconds));
      n.put("lagMessages", pt.lagMessages());
      n.put("maxLagMs", pt.maxLagSeconds() == null ? null : pt.maxLagSeconds() * 1000);
    }
    List<StatsStore.QueueStats> all = stats.queues();
    ArrayNode queues = body.putArray("queues");
    long total = 0;
    long pending = 0;
    long processing = 0;
    long completed = 0;
    long dead = 0;
    long leases = 0;
    List<String> names = new ArrayList<>();
    for (StatsStore.QueueStats q : all) {
      if (!matches(q, queue, namespace, task)) {
        continue;
      }
      names.add(q.name());
      total += q.total();
      pending += q.pending();
      processing += q.processing();
      completed += q.completed();
      dead += q.deadLetter();
      leases += q.activeLeases();
      ObjectNode n = queues.addObject();
      n.put("name", q.name()).put("namespace", q.namespace()).put("task", q.task());
      n.put("partitions", q.partitions());
      QueueViews.counts(n.putObject("messages"), q);
      n.put("lagMessages", q.lagMessages()).put("maxLagSeconds", q.maxLagSeconds());
    }
    body.putObject("messages")
        .put("total", total)
        .put("pending", pending)
        .put("processing", processing)
        .put("completed", completed)
        .put("failed", failed)
        .put("deadLetter", dead);
    body.putObject("leases")
        .put("active", leases)
        .put("partitionsWithLeases", leases)
        .put("totalBatchSize", processing)
        .put("totalAcked", acked);
    boolean filtered = queue != null || namespace != null || task != null;
    DeadLetterStore.Summary d = deadLetters.summary(filtered ? names : null);
    ObjectNode dlq = body.putObject("deadLetterQueue");
    // the snapshot's count, of the queues asked for as the rest of the answer
    dlq.put("totalMessages", dead).put("affectedPartitions", d.partitions());
    ArrayNode top = dlq.putArray("topErrors");
    for (Map.Entry<String, Long> e : d.topErrors().entrySet()) {
      top.addObject().put("error", e.getKey()).put("count", e.getValue());
    }
    body.putArray("workers");
    body.putObject("errors");
    body.put("statsAge", QueueViews.statsAge(all, now));
    Replies.json(res, 200, body);
  }

  private static boolean matches(
      StatsStore.QueueStats q, String queue, String namespace, String task) {
    return (queue == null || q.name().equals(queue))
        && (namespace == null || q.namespace().equals(namespace))
        && (task == null || q.task().equals(task));
  }

  private static double rate(long count, double seconds) {
    return Math.round(count / seconds * 100) / 100.0;
  }

  private void queues(Request req, Response res) {
    Params p = new Params(req);
    int limit = p.limit(100, 1000);
    int offset = p.offset();
    String namespace = p.optional("namespace");
    String task = p.optional("task");
    List<StatsStore.QueueStats> matching =
        stats.queues().stream().filter(q -> matches(q, null, namespace, task)).toList();
    ObjectNode body = Json.object();
    ArrayNode list = body.putArray("queues");
    for (StatsStore.QueueStats q : matching.stream().skip(offset).limit(limit).toList()) {
      ObjectNode n = list.addObject();
      n.put("id", q.id().toString());
      n.put("name", q.name()).put("namespace", q.namespace()).put("task", q.task());
      n.put("createdAt", Json.millis(q.createdAt()));
      n.put("partitions", q.partitions());
      QueueViews.counts(n.putObject("messages"), q);
    }
    body.put("total", matching.size());
    body.putObject("pagination").put("limit", limit).put("offset", offset);
    Replies.json(res, 200, body);
  }

  private void queue(Request req, Response res) {
    Params params = new Params(req);
    ResourceStore.QueueRow q = QueueViews.queue(resources, params.name("queue"));
    QueueViews.PartitionPage partitions = QueueViews.partitionPage(resources, stats, q, params);
    ObjectNode body = Json.object();
    ObjectNode queue = body.putObject("queue");
    queue.put("id", q.id().toString());
    queue.put("name", q.name()).put("namespace", q.namespace()).put("task", q.task());
    queue.put("priority", q.priority());
    queue.put("createdAt", Json.millis(q.createdAt()));
    queue
        .putObject("config")
        .put("leaseTime", q.leaseTime())
        .put("retryLimit", q.retryLimit())
        .put("retryDelay", q.retryDelay())
        .put("ttl", q.ttl())
        .put("maxQueueSize", q.maxSize())
        .put("deadLetterQueue", q.deadLetterQueue())
        .put("retentionEnabled", q.retentionEnabled())
        .put("retentionSeconds", q.retentionSeconds())
        .put("completedRetentionSeconds", q.completedRetentionSeconds());
    ArrayNode list = body.putArray("partitions");
    for (ResourceStore.PartitionStats p : partitions.page().items()) {
      ObjectNode n = QueueViews.partition(list.addObject(), p, "messages");
      n.putObject("cursor").put("totalConsumed", p.totalConsumed()).put("offset", p.lastOffset());
      n.put("lastActivity", Json.millisOrNull(p.lastActivity()));
    }
    partitions.totals(body.putObject("totals").putObject("messages"));
    partitions.pagination(body);
    Replies.json(res, 200, body);
  }

  private void queueMessages(Request req, Response res) {
    Params p = new Params(req);
    ResourceStore.QueueRow q = QueueViews.queue(resources, p.name("queue"));
    int limit = p.limit(50, 1000);
    int offset = p.offset(100_000);
    MessageStore.Filter all =
        new MessageStore.Filter(
            q.name(), null, null, null, null, Instant.EPOCH, clock.instant().plusSeconds(60));
    ArrayNode list = Json.MAPPER.createArrayNode();
    for (MessageStore.Listed m : messages.list(all, limit, offset)) {
      if (m.frame() != null && m.frame().isDeleted()) {
        continue;
      }
      list.addObject()
          .put("id", m.messageId().toString())
          .put("transactionId", m.frame() == null ? null : m.frame().transactionId())
          .put("partitionId", m.partitionId().toString())
          .put("queuePath", m.queue() + "/" + m.partition())
          .put("queue", m.queue())
          .put("partition", m.partition())
          .put("status", m.status())
          .put("createdAt", Json.millis(m.createdAt()));
    }
    Replies.json(res, 200, list);
  }

  private void analytics(Request req, Response res) {
    Params p = new Params(req);
    String interval = p.string("interval", "hour");
    int bucket =
        switch (interval) {
          case "minute" -> 1;
          case "hour" -> 60;
          case "day" -> 1440;
          default -> throw ApiException.badRequest("interval must be minute, hour or day");
        };
    TimeWindow w = TimeWindow.of(p, clock.instant(), Duration.ofHours(24));
    ObjectNode body = Json.object();
    ArrayNode points = body.putArray("dataPoints");
    for (StatsStore.Point pt :
        stats.series(
            p.optional("queue"),
            p.optional("namespace"),
            p.optional("task"),
            w.from(),
            w.to(),
            bucket)) {
      points
          .addObject()
          .put("timestamp", Json.millis(pt.at()))
          .put("messages", pt.pushed())
          .put("pushed", pt.pushed())
          .put("popped", pt.popped())
          .put("acked", pt.acked())
          .put("failed", pt.failed())
          .put("deadLettered", pt.deadLettered())
          .put("lagMessages", pt.lagMessages())
          .put("maxLagSeconds", pt.maxLagSeconds());
    }
    body.put("interval", interval);
    body.put("from", Json.millis(w.from()));
    body.put("to", Json.millis(w.to()));
    Replies.json(res, 200, body);
  }

  /** The local push buffer of maintenance and failover: messages waiting to drain, failures. */
  private void buffers(Request req, Response res) {
    BufferedPush.Status b = pushes.status();
    Replies.json(
        res,
        200,
        Json.object()
            .put("pending", b.pending())
            .put("failed", b.failed())
            .put("dbHealthy", db.ping())
            .put("bufferHealthy", b.healthy())
            .put("drained", b.drained())
            .put("worker", 0));
  }

  private void refresh(Request req, Response res) {
    int queues = statistics.refreshNow();
    Replies.json(
        res,
        200,
        Json.object()
            .put("success", true)
            .put("queues", queues)
            .put("refreshedAt", Json.millis(clock.instant())));
  }
}
