package queen.server.http;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import queen.server.http.auth.Access;
import queen.server.ops.ConsumerGroups;
import queen.server.ops.LagSnapshot;
import queen.server.store.ConsumerGroupStore;
import queen.server.store.Page;
import queen.server.store.ResourceStore;

/**
 * The consumer-group routes of WIRE.md section 11: list, detail, lagging, delete (on every queue or
 * one), subscription start, and seeks. Unknown queues and partitions are 404; deleting a group that
 * has no cursors is a success that deleted nothing, as the clients call it before subscribing and
 * expect no error.
 */
public final class ConsumerGroupRoutes implements Routes {
  /** A lagging group that has acked nothing for this long is reported {@code Dead}. */
  private static final Duration DEAD_AFTER = Duration.ofHours(1);

  private static final String BASE = "/api/v1/consumer-groups";

  private final ConsumerGroups groups;
  private final ConsumerGroupStore store;
  private final ResourceStore resources;
  private final LagSnapshot lags;

  public ConsumerGroupRoutes(
      ConsumerGroups groups, ConsumerGroupStore store, ResourceStore resources, LagSnapshot lags) {
    this.groups = groups;
    this.store = store;
    this.resources = resources;
    this.lags = lags;
  }

  @Override
  public void declare(RouteTable rules) {
    rules.get(BASE, Access.READ_ONLY, (req, res) -> Replies.json(res, 200, list()));
    rules.get(BASE + "/lagging", Access.READ_ONLY, this::lagging);
    rules.get(BASE + "/{group}", Access.READ_ONLY, this::detail);
    // every group's cursors on a page of one queue's partitions: the dashboard's queue page
    rules.get("/api/v1/resources/queues/{queue}/cursors", Access.READ_ONLY, this::queueCursors);
    rules.delete(BASE + "/{group}", Access.ADMIN, (req, res) -> delete(req, res, null));
    rules.delete(
        BASE + "/{group}/queues/{queue}",
        Access.ADMIN,
        (req, res) -> delete(req, res, new Params(req).name("queue")));
    rules.post(BASE + "/{group}/subscription", Access.READ_WRITE, this::subscription);
    rules.post(BASE + "/{group}/queues/{queue}/seek", Access.READ_WRITE, this::seek);
    rules.post(
        BASE + "/{group}/queues/{queue}/partitions/{partition}/seek",
        Access.READ_WRITE,
        this::seekPartition);
  }

  private ArrayNode list() {
    ArrayNode list = Json.MAPPER.createArrayNode();
    Instant deadBefore = Instant.now().minus(DEAD_AFTER);
    for (ResourceStore.GroupSummary g : resources.consumerGroups()) {
      ObjectNode n = list.addObject();
      n.put("name", g.group());
      n.putArray("topics").add(g.queue());
      n.put("queueName", g.queue());
      n.put("members", g.members());
      n.put("partitionsWithLag", g.partitionsWithLag());
      n.put("totalLag", g.totalLag());
      n.put("maxTimeLag", g.maxTimeLagSeconds());
      n.put("state", state(g, deadBefore));
      n.put("lastConsumedAt", Json.millisOrNull(g.lastConsumedAt()));
      n.put("subscriptionMode", g.subscriptionMode());
      n.put("subscriptionTimestamp", Json.millisOrNull(g.subscriptionTimestamp()));
      n.put("subscriptionCreatedAt", Json.millisOrNull(g.subscriptionCreatedAt()));
    }
    return list;
  }

  /** Seconds from the oldest unconsumed message to now; 0 when there is none. */
  private static long timeLag(Instant oldestUnconsumedAt, Instant now) {
    return oldestUnconsumedAt == null
        ? 0
        : Math.max(0, Duration.between(oldestUnconsumedAt, now).toSeconds());
  }

  private static String state(ResourceStore.GroupSummary g, Instant deadBefore) {
    if (g.partitionsWithLag() == 0) {
      return "Stable";
    }
    boolean idle = g.lastConsumedAt() == null || g.lastConsumedAt().isBefore(deadBefore);
    return idle && g.maxTimeLagSeconds() > DEAD_AFTER.toSeconds() ? "Dead" : "Lagging";
  }

  private void detail(Request req, Response res) {
    Params p = new Params(req);
    String group = p.name("group");
    // ?queue= narrows the answer to one queue's cursors (the dashboard's queue page)
    String only = p.optional("queue");
    // a page of cursors: a group reading 10,000 partitions answered 1.5 MB in 0.3 s unpaged
    int limit = p.limit(1000, 10_000);
    int offset = p.offset();
    // ?partitionFrom= starts at a partition name: the cursors of a page of a queue's partitions
    String from = p.optional("partitionFrom");
    Page<ConsumerGroupStore.Cursor> cursors =
        store.detail(
            group,
            only == null ? null : Fields.name(only, "queue"),
            from == null ? null : Fields.name(from, "partitionFrom"),
            limit,
            offset,
            lags.knownOldest());
    if (cursors.total() == 0) {
      throw ApiException.notFound("Consumer group not found");
    }
    // the body is keyed by queue name, so the count travels in a header
    res.header("X-Total-Count", Long.toString(cursors.total()));
    Instant now = Instant.now();
    ObjectNode body = Json.object();
    for (ConsumerGroupStore.Cursor c : cursors.items()) {
      ObjectNode queue = (ObjectNode) body.get(c.queue());
      if (queue == null) {
        queue = body.putObject(c.queue());
        queue.putArray("partitions");
      }
      cursor((ArrayNode) queue.get("partitions"), c, now);
    }
    Replies.json(res, 200, body);
  }

  /**
   * {@code {"queue": name, "groups": {group: [cursor, ...]}}}: each cursor as the group's detail
   * lists it; {@code limit} partitions (100 by default) from {@code partitionFrom} on, by name.
   */
  private void queueCursors(Request req, Response res) {
    Params p = new Params(req);
    String queue = p.name("queue");
    String from = p.optional("partitionFrom");
    int limit = p.limit(100, 10_000);
    if (resources.queue(queue).isEmpty()) {
      throw ApiException.notFound("Queue not found");
    }
    Map<String, List<ConsumerGroupStore.Cursor>> byGroup =
        store.queueCursors(
            queue,
            from == null ? null : Fields.name(from, "partitionFrom"),
            limit,
            lags.knownOldest());
    Instant now = Instant.now();
    ObjectNode body = Json.object().put("queue", queue);
    ObjectNode groupsNode = body.putObject("groups");
    byGroup.forEach(
        (group, cursors) -> {
          ArrayNode list = groupsNode.putArray(group);
          cursors.forEach(c -> cursor(list, c, now));
        });
    Replies.json(res, 200, body);
  }

  private static void cursor(ArrayNode into, ConsumerGroupStore.Cursor c, Instant now) {
    into.addObject()
        .put("partition", c.partition())
        .put("partitionId", c.partitionId().toString())
        .put("workerId", c.workerId() == null ? null : c.workerId().toString())
        .put("lastConsumedAt", Json.millisOrNull(c.lastConsumedAt()))
        .put("totalConsumed", c.totalConsumed())
        .put("committedOffset", c.committed())
        .put("offsetLag", c.offsetLag())
        .put("timeLagSeconds", timeLag(c.oldestUnconsumedAt(), now))
        .put("leaseActive", c.leaseActive());
  }

  private void lagging(Request req, Response res) {
    Params p = new Params(req);
    int min = Math.max(p.integer("minLagSeconds", 3600), 0);
    int limit = p.limit(1000, LagSnapshot.CAPACITY);
    ArrayNode list = Json.MAPPER.createArrayNode();
    for (ConsumerGroupStore.Lagging l : lags.lagging(min, limit)) {
      list.addObject()
          .put("consumer_group", l.group())
          .put("queue_name", l.queue())
          .put("partition_name", l.partition())
          .put("partition_id", l.partitionId().toString())
          .put("worker_id", l.workerId() == null ? null : l.workerId().toString())
          .put("offset_lag", l.offsetLag())
          .put("time_lag_seconds", l.timeLagSeconds())
          .put("lag_hours", Math.round(l.timeLagSeconds() / 36.0) / 100.0)
          .put("oldest_unconsumed_at", Json.millisOrNull(l.oldestUnconsumedAt()))
          .put("last_consumed_at", Json.millisOrNull(l.lastConsumedAt()));
    }
    Replies.json(res, 200, list);
  }

  private void delete(Request req, Response res, String queue) {
    Params p = new Params(req);
    String group = p.name("group");
    boolean deleteMetadata = p.bool("deleteMetadata", true);
    ConsumerGroupStore.Deleted d = groups.delete(group, queue, deleteMetadata);
    if (!d.queueFound()) {
      throw ApiException.notFound("Queue not found");
    }
    ObjectNode body = Json.object().put("success", true).put("consumerGroup", group);
    if (queue != null) {
      body.put("queueName", queue);
    }
    body.put("deletedPartitions", d.partitions());
    body.put("metadataDeleted", deleteMetadata);
    Replies.json(res, 200, body);
  }

  private void subscription(Request req, Response res) {
    String group = new Params(req).name("group");
    if (group.equals(PopRoutes.QUEUE_MODE)) {
      // queue mode reads every partition from its first message: retention, which honours a
      // subscription, deleted the backlog of partitions queue mode had not reached yet
      throw ApiException.badRequest(
          "Queue mode ("
              + group
              + ") has no subscription: it reads every partition from its"
              + " first message; seek it instead");
    }
    JsonNode ts = Json.objectBody(req).get("subscriptionTimestamp");
    if (ts == null || ts.isNull()) {
      throw ApiException.badRequest("Missing subscriptionTimestamp in request body");
    }
    if (!ts.isTextual()) {
      throw ApiException.badRequest("subscriptionTimestamp must be an ISO-8601 string");
    }
    Instant at = Fields.timestamp("subscriptionTimestamp", ts.asText());
    int rows = store.updateSubscription(group, at);
    Replies.json(
        res,
        200,
        Json.object()
            .put("success", true)
            .put("consumerGroup", group)
            .put("newTimestamp", Json.millis(at))
            .put("rowsUpdated", rows));
  }

  private void seek(Request req, Response res) {
    Params p = new Params(req);
    String group = p.name("group");
    String queue = p.name("queue");
    JsonNode body = Json.objectBody(req);
    boolean toEnd = body.path("toEnd").asBoolean(false) && body.get("toEnd").isBoolean();
    JsonNode ts = body.get("timestamp");
    boolean hasTs = ts != null && !ts.isNull();
    if (toEnd == hasTs) {
      throw ApiException.badRequest("Must specify either 'toEnd': true or 'timestamp'");
    }
    if (hasTs && !ts.isTextual()) {
      throw ApiException.badRequest("timestamp must be an ISO-8601 string");
    }
    Instant at = hasTs ? Fields.timestamp("timestamp", ts.asText()) : null;
    ConsumerGroupStore.Sought s = groups.seek(group, queue, at);
    if (!s.queueFound()) {
      throw ApiException.notFound("Queue not found");
    }
    Replies.json(
        res,
        200,
        Json.object()
            .put("success", true)
            .put("consumerGroup", group)
            .put("queueName", queue)
            .put("seekToEnd", toEnd)
            .put("targetTimestamp", Json.millisOrNull(at))
            .put("partitionsUpdated", s.partitions()));
  }

  private void seekPartition(Request req, Response res) {
    Params p = new Params(req);
    String group = p.name("group");
    String queue = p.name("queue");
    String partition = p.name("partition");
    ConsumerGroupStore.PartitionSought s = groups.seekPartitionToEnd(group, queue, partition);
    if (!s.queueFound()) {
      throw ApiException.notFound("Queue not found");
    }
    if (s.cursor() == null) {
      throw ApiException.notFound("Partition not found");
    }
    Replies.json(
        res,
        200,
        Json.object()
            .put("success", true)
            .put("consumerGroup", group)
            .put("queueName", queue)
            .put("partitionName", partition)
            .put("updated", true)
            .put("cursorMovedTo", s.cursor()));
  }
}
