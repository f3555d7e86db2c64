package queen.server.http;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.helidon.webserver.http.HttpRules;
import io.helidon.webserver.http.HttpService;
import java.time.Duration;
import java.time.Instant;
import queen.server.store.ResourceStore;

/**
 * {@code GET /api/v1/resources/queues}, {@code DELETE /api/v1/resources/queues/:queue} and {@code
 * GET /api/v1/consumer-groups}: what operators and the CLI list, and the queue delete.
 */
public final class ResourceRoutes implements HttpService {
  /** A lagging group that has acked nothing for this long is reported {@code Dead}. */
  private static final Duration DEAD_AFTER = Duration.ofHours(1);

  private final ResourceStore store;
  private final Runnable queuesChanged;

  public ResourceRoutes(ResourceStore store, Runnable queuesChanged) {
    this.store = store;
    this.queuesChanged = queuesChanged;
  }

  @Override
  public void routing(HttpRules rules) {
    rules.get("/api/v1/resources/queues", (req, res) -> Replies.json(res, 200, queues()));
    rules.delete(
        "/api/v1/resources/queues/{queue}",
        (req, res) -> {
          String name = new Params(req).path("queue");
          boolean existed = store.deleteQueue(name);
          queuesChanged.run();
          Replies.json(
              res,
              200,
              Json.object().put("deleted", true).put("queue", name).put("existed", existed));
        });
    rules.get("/api/v1/consumer-groups", (req, res) -> Replies.json(res, 200, groups()));
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

  private ArrayNode groups() {
    ArrayNode list = Json.MAPPER.createArrayNode();
    Instant deadBefore = Instant.now().minus(DEAD_AFTER);
    for (ResourceStore.GroupSummary g : store.consumerGroups()) {
      ObjectNode n = list.addObject();
      n.put("name", g.group());
      n.putArray("topics").add(g.queue());
      n.put("queueName", g.queue());
      n.put("members", g.members());
      n.put("partitionsWithLag", g.partitionsWithLag());
      n.put("totalLag", g.totalLag());
      n.put("maxTimeLag", g.maxTimeLagSeconds());
      n.put("state", state(g, deadBefore));
      n.put("lastConsumedAt", time(g.lastConsumedAt()));
      n.put("subscriptionMode", g.subscriptionMode());
      n.put("subscriptionTimestamp", time(g.subscriptionTimestamp()));
      n.put("subscriptionCreatedAt", time(g.subscriptionCreatedAt()));
    }
    return list;
  }

  private static String state(ResourceStore.GroupSummary g, Instant deadBefore) {
    if (g.partitionsWithLag() == 0) {
      return "Stable";
    }
    boolean idle = g.lastConsumedAt() == null || g.lastConsumedAt().isBefore(deadBefore);
    return idle && g.maxTimeLagSeconds() > DEAD_AFTER.toSeconds() ? "Dead" : "Lagging";
  }

  private static String time(Instant t) {
    return t == null ? null : Json.millis(t);
  }
}
