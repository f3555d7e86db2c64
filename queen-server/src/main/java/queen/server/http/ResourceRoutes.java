package queen.server.http;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.time.Duration;
import java.time.Instant;
import java.time.InstantSource;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import queen.server.http.auth.Access;
import queen.server.store.Page;
import queen.server.store.QueueRemoval;
import queen.server.store.ResourceStore;
import queen.server.store.StatsStore;

/**
 * The resources of WIRE.md section 14 and the JS Admin additions of section 18: queues (list,
 * detail, delete, clear), partitions, and the namespace, task and overview summaries. The list and
 * the detail are computed live from partition heads and cursors; the summaries read the statistics
 * snapshot that ops/Statistics refreshes, a few seconds old.
 */
public final class ResourceRoutes implements Routes {
  private final ResourceStore store;
  private final QueueRemoval removal;
  private final StatsStore stats;
  private final Runnable queuesChanged;
  private final InstantSource clock;

  public ResourceRoutes(
      ResourceStore store,
      QueueRemoval removal,
      StatsStore stats,
      Runnable queuesChanged,
      InstantSource clock) {
    this.store = store;
    this.removal = removal;
    this.stats = stats;
    this.queuesChanged = queuesChanged;
    this.clock = clock;
  }

  @Override
  public void declare(RouteTable rules) {
    rules.get(
        "/api/v1/resources/queues",
        Access.READ_ONLY,
        (req, res) -> Replies.json(res, 200, queues()));
    rules.delete(
        "/api/v1/resources/queues/{queue}",
        Access.ADMIN,
        (req, res) -> {
          String name = new Params(req).name("queue");
          boolean existed = removal.delete(name);
          queuesChanged.run();
          Replies.json(
              res,
              200,
              Json.object().put("deleted", true).put("queue", name).put("existed", existed));
        });
    rules.get("/api/v1/resources/queues/{queue}", Access.READ_ONLY, this::detail);
    rules.get("/api/v1/resources/partitions", Access.READ_ONLY, this::partitions);
    rules.get(
        "/api/v1/resources/namespaces",
        Access.READ_ONLY,
        (req, res) -> Replies.json(res, 200, groupedBy("namespaces", "namespace", true)));
    rules.get(
        "/api/v1/resources/tasks",
        Access.READ_ONLY,
        (req, res) -> Replies.json(res, 200, groupedBy("tasks", "task", false)));
    rules.get(
        "/api/v1/resources/overview",
        Access.READ_ONLY,
        (req, res) -> Replies.json(res, 200, overview()));
    rules.delete("/api/v1/queues/{queue}/clear", Access.ADMIN, this::clear);
  }

  private void detail(Request req, Response res) {
    Params params = new Params(req);
    ResourceStore.QueueRow q = QueueViews.queue(store, params.name("queue"));
    QueueViews.PartitionPage partitions = QueueViews.partitionPage(store, stats, q, params);
    ObjectNode body = Json.object();
    body.put("id", q.id().toString());
    body.put("name", q.name());
    body.put("namespace", q.namespace());
    body.put("task", q.task());
    body.put("createdAt", Json.millis(q.createdAt()));
    ArrayNode list = body.putArray("partitions");
    for (ResourceStore.PartitionStats p : partitions.page().items()) {
      QueueViews.partition(list.addObject(), p, "stats");
    }
    partitions.totals(body.putObject("totals"));
    partitions.pagination(body);
    Replies.json(res, 200, body);
  }

  private void partitions(Request req, Response res) {
    Params p = new Params(req);
    int limit = p.limit(100, 1000);
    int offset = p.offset();
    Page<ResourceStore.PartitionSummary> page =
        store.partitionList(p.optional("queue"), limit, offset);
    ObjectNode body = Json.object();
    ArrayNode list = body.putArray("partitions");
    for (ResourceStore.PartitionSummary s : page.items()) {
      list.addObject()
          .put("id", s.id().toString())
          .put("name", s.name())
          .put("queue", s.queue())
          .put("createdAt", Json.millis(s.createdAt()))
          .put("lastOffset", s.lastOffset())
          .put("messages", s.retained())
          .put("lastActivity", Json.millis(s.lastActivity()));
    }
    body.put("total", page.total());
    body.putObject("pagination").put("limit", limit).put("offset", offset);
    Replies.json(res, 200, body);
  }

  private ObjectNode groupedBy(String key, String field, boolean byNamespace) {
    Map<String, long[]> groups = new TreeMap<>();
    for (StatsStore.QueueStats q : stats.queues()) {
      long[] g = groups.computeIfAbsent(byNamespace ? q.namespace() : q.task(), k -> new long[4]);
      g[0]++;
      g[1] += q.partitions();
      g[2] += q.total();
      g[3] += q.pending();
    }
    ObjectNode body = Json.object();
    ArrayNode list = body.putArray(key);
    groups.forEach(
        (name, g) -> {
          ObjectNode n = list.addObject();
          n.put(field, name);
          n.put("queues", g[0]);
          n.put("partitions", g[1]);
          n.putObject("messages").put("total", g[2]).put("pending", g[3]);
        });
    return body;
  }

  private ObjectNode overview() {
    List<StatsStore.QueueStats> queues = stats.queues();
    Instant now = clock.instant();
    long partitions = 0;
    long total = 0;
    long pending = 0;
    long processing = 0;
    long completed = 0;
    long dead = 0;
    List<Long> timeLags = new ArrayList<>();
    List<Long> offsetLags = new ArrayList<>();
    Set<String> namespaces = new HashSet<>();
    Set<String> tasks = new HashSet<>();
    for (StatsStore.QueueStats q : queues) {
      partitions += q.partitions();
      total += q.total();
      pending += q.pending();
      processing += q.processing();
      completed += q.completed();
      dead += q.deadLetter();
      timeLags.add(q.maxLagSeconds());
      offsetLags.add(q.lagMessages());
      namespaces.add(q.namespace());
      tasks.add(q.task());
    }
    List<StatsStore.Point> recent =
        stats.series(null, null, null, now.minus(Duration.ofMinutes(5)), now, 5);
    long pushed = recent.stream().mapToLong(StatsStore.Point::pushed).sum();
    long acked = recent.stream().mapToLong(StatsStore.Point::acked).sum();
    long failed = recent.stream().mapToLong(StatsStore.Point::failed).sum();
    ObjectNode body = Json.object();
    body.put("queues", queues.size());
    body.put("partitions", partitions);
    body.put("namespaces", namespaces.size());
    body.put("tasks", tasks.size());
    body.putObject("messages")
        .put("total", total)
        .put("pending", pending)
        .put("processing", processing)
        .put("completed", completed)
        .put("failed", failed)
        .put("deadLetter", dead);
    ObjectNode lag = body.putObject("lag");
    summary(lag.putObject("time"), timeLags);
    summary(lag.putObject("offset"), offsetLags);
    body.putObject("throughput")
        .put("ingestedPerSecond", Math.round(pushed / 3.0) / 100.0)
        .put("processedPerSecond", Math.round(acked / 3.0) / 100.0);
    body.put("timestamp", Json.millis(now));
    body.put("statsAge", QueueViews.statsAge(queues, now));
    return body;
  }

  /** avg, median, min and max of the values (0 when there are none). */
  private static void summary(ObjectNode n, List<Long> values) {
    List<Long> sorted = values.stream().sorted().toList();
    long min = sorted.isEmpty() ? 0 : sorted.getFirst();
    long max = sorted.isEmpty() ? 0 : sorted.getLast();
    long median = sorted.isEmpty() ? 0 : sorted.get(sorted.size() / 2);
    double avg = sorted.stream().mapToLong(Long::longValue).average().orElse(0);
    n.put("avg", Math.round(avg * 100) / 100.0)
        .put("median", median)
        .put("min", min)
        .put("max", max);
  }

  private void clear(Request req, Response res) {
    Params p = new Params(req);
    String queue = p.name("queue");
    String partition = p.optionalName("partition");
    QueueRemoval.Cleared c = removal.clear(queue, partition);
    if (!c.queueFound()) {
      throw ApiException.notFound("Queue not found");
    }
    if (partition != null && c.partitions() == 0) {
      throw ApiException.notFound("Partition not found");
    }
    ObjectNode body = Json.object().put("success", true).put("queue", queue);
    body.put("partition", partition);
    body.put("partitionsCleared", c.partitions());
    body.put("messagesDeleted", c.messages());
    Replies.json(res, 200, body);
  }

  private ObjectNode queues() {
    ObjectNode body = Json.object();
    ArrayNode list = body.putArray("queues");
    for (ResourceStore.QueueSummary q : store.queues()) {
      ObjectNode n = list.addObject();
      n.put("id", q.id().toString());
      n.put("name", q.name());
      n.put("namespace", q.namespace());
      n.put("task", q.task());
      n.put("createdAt", Json.millis(q.createdAt()));
      n.put("partitions", q.partitions());
      n.putObject("messages")
          .put("total", q.total())
          .put("pending", q.pending())
          .put("processing", q.processing());
    }
    return body;
  }
}
