package queen.server.http;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.helidon.webserver.http.HttpRules;
import io.helidon.webserver.http.HttpService;
import queen.server.store.ResourceStore;

/**
 * {@code GET /api/v1/resources/queues} and {@code DELETE /api/v1/resources/queues/:queue}: what
 * operators and the CLI list, and the queue delete.
 */
public final class ResourceRoutes implements HttpService {
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
