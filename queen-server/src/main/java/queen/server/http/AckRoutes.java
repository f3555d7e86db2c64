package queen.server.http;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.ArrayList;
import java.util.List;
import queen.server.ack.AckRequest;
import queen.server.ack.AckService;
import queen.server.http.auth.Access;
import queen.server.ops.Statistics;
import queen.server.store.AckOutcome;
import queen.server.store.AckStore;

/**
 * {@code POST /api/v1/ack} and {@code /api/v1/ack/batch}. Malformed requests are 400s; business
 * failures (unknown message, stale lease) are per item inside a 200: the clients treat any 4xx as
 * fatal and never read per-item errors from an HTTP error.
 */
public final class AckRoutes implements Routes {
  private final AckService acks;
  private final Statistics stats;

  public AckRoutes(AckService acks, Statistics stats) {
    this.acks = acks;
    this.stats = stats;
  }

  @Override
  public void declare(RouteTable rules) {
    rules.post(
        "/api/v1/ack",
        Access.READ_WRITE,
        (req, res) -> {
          JsonNode body = Json.objectBody(req);
          if (!body.path("transactionId").isTextual()) {
            throw ApiException.badRequest("transactionId is required");
          }
          if (!body.path("partitionId").isTextual()) {
            throw ApiException.badRequest("partitionId is required to ensure message uniqueness");
          }
          String group = group(body);
          // the single route stores a missing error as "" (Queen's behaviour)
          List<AckRequest> one = List.of(request(body, "", ""));
          Replies.json(res, 200, render(one, counted(one, acks.ack(group, one))));
        });
    rules.post("/api/v1/lease/{leaseId}/extend", Access.READ_WRITE, this::extend);
    rules.post(
        "/api/v1/ack/batch",
        Access.READ_WRITE,
        (req, res) -> {
          JsonNode body = Json.objectBody(req);
          JsonNode list = body.get("acknowledgments");
          if (list == null || !list.isArray()) {
            throw ApiException.badRequest("acknowledgments array is required");
          }
          List<AckRequest> requests = new ArrayList<>(list.size());
          for (int i = 0; i < list.size(); i++) {
            JsonNode item = list.get(i);
            String at = " (acknowledgments[" + i + "])";
            if (!item.path("transactionId").isTextual()) {
              throw ApiException.badRequest(
                  "Each acknowledgment must have a valid transactionId string" + at);
            }
            if (!item.path("partitionId").isTextual()) {
              throw ApiException.badRequest(
                  "Each acknowledgment must have a valid partitionId string to ensure message"
                      + " uniqueness"
                      + at);
            }
            requests.add(request(item, at, null));
          }
          String group = group(body);
          List<AckOutcome> outcomes =
              requests.isEmpty() ? List.of() : counted(requests, acks.ack(group, requests));
          Replies.json(res, 200, render(requests, outcomes));
        });
  }

  private List<AckOutcome> counted(List<AckRequest> requests, List<AckOutcome> outcomes) {
    for (AckOutcome o : outcomes) {
      if (o.success()) {
        stats.acknowledged(o.queueName(), requests.get(o.index()).status(), o.dlq());
      }
    }
    return outcomes;
  }

  /** Extends every live lease of the worker id; the answer is per lease id, inside a 200. */
  private void extend(Request req, Response res) {
    // an empty body asks for the default: Queen's Python client drops the {} it means to send, so
    // each of its renewals was a 400 and a long handler's batch went to another consumer
    byte[] sent = req.body();
    JsonNode body = sent.length == 0 ? Json.object() : Json.objectBody(sent);
    int seconds = 60;
    JsonNode s = body.get("seconds");
    if (s != null && !s.isNull()) {
      if (!s.isIntegralNumber() || !s.canConvertToInt() || s.intValue() <= 0) {
        throw ApiException.badRequest("seconds must be a positive integer");
      }
      seconds = s.intValue();
    }
    String leaseId = new Params(req).path("leaseId");
    AckStore.Extension e = acks.extend(leaseId, seconds);
    ObjectNode n = Json.object();
    n.put("index", 0).put("leaseId", leaseId);
    n.put("success", e.status() == AckStore.ExtendStatus.EXTENDED);
    switch (e.status()) {
      case EXTENDED -> n.putNull("error").put("expiresAt", Json.millis(e.expiresAt()));
      case EXPIRED -> n.put("error", "Lease already expired").putNull("expiresAt");
      case MISSING -> n.put("error", "Lease not found").putNull("expiresAt");
    }
    Replies.json(res, 200, Json.MAPPER.createArrayNode().add(n));
  }

  /**
   * The group comes only from the top level; null when absent, null or empty: queue mode's cursor,
   * unless the lease decides (see {@link queen.server.ack.AckService#ack}).
   */
  private static String group(JsonNode body) {
    String group = Fields.optionalString(body, "consumerGroup", null);
    return group == null || group.isEmpty() ? null : Fields.name(group, "consumerGroup");
  }

  static AckRequest request(JsonNode item, String at, String missingError) {
    String status = Fields.optionalString(item, "status", "completed", at);
    String lease = Fields.optionalString(item, "leaseId", null, at);
    return new AckRequest(
        Fields.uuid(item.get("partitionId").asText(), "partitionId" + at),
        Fields.identifier(item.get("transactionId").asText(), "transactionId" + at),
        status,
        lease,
        Fields.optionalString(item, "error", missingError, at));
  }

  private static ArrayNode render(List<AckRequest> requests, List<AckOutcome> outcomes) {
    ArrayNode out = Json.MAPPER.createArrayNode();
    for (AckOutcome o : outcomes) {
      ObjectNode n = out.addObject();
      n.put("index", o.index());
      n.put("transactionId", requests.get(o.index()).transactionId());
      n.put("success", o.success());
      n.put("error", o.error());
      n.put("queueName", o.queueName());
      n.put("partitionName", o.partitionName());
      n.put("leaseReleased", o.leaseReleased());
      n.put("dlq", o.dlq());
    }
    return out;
  }
}
