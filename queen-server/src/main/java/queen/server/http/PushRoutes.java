package queen.server.http;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.helidon.webserver.http.HttpRules;
import io.helidon.webserver.http.HttpService;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import queen.server.push.PushItem;
import queen.server.push.PushResult;
import queen.server.push.PushService;

/**
 * {@code POST /api/v1/push}: validates every item before anything is written, then answers a bare
 * array in input order (the clients pair results with items by position).
 */
public final class PushRoutes implements HttpService {
  private static final byte[] EMPTY_OBJECT = "{}".getBytes(java.nio.charset.StandardCharsets.UTF_8);

  private final PushService push;

  public PushRoutes(PushService push) {
    this.push = push;
  }

  @Override
  public void routing(HttpRules rules) {
    rules.post(
        "/api/v1/push",
        (req, res) -> {
          JsonNode body = Json.objectBody(req);
          List<PushItem> items = items(body.get("items"));
          List<PushResult> results = push.push(items);
          ArrayNode out = Json.MAPPER.createArrayNode();
          boolean stored = results.isEmpty();
          for (int i = 0; i < results.size(); i++) {
            PushResult r = results.get(i);
            ObjectNode o = out.addObject();
            o.put("index", i);
            o.put("transaction_id", r.transactionId());
            o.put("message_id", r.messageId().toString());
            if (r.status() == PushResult.Status.QUEUED) {
              stored = true;
              o.put("status", "queued");
              o.put("partition_id", r.partitionId().toString());
              o.put("trace_id", r.traceId() == null ? null : r.traceId().toString());
            } else {
              o.put("status", "duplicate");
            }
            o.put("queueName", r.queue());
          }
          Replies.json(res, stored ? 201 : 200, out);
        });
  }

  static List<PushItem> items(JsonNode items) {
    if (items == null || !items.isArray()) {
      throw ApiException.badRequest("items array is required");
    }
    List<PushItem> out = new ArrayList<>(items.size());
    for (int i = 0; i < items.size(); i++) {
      out.add(item(items.get(i), " (items[" + i + "])", "payload"));
    }
    return out;
  }

  /**
   * One item, validated; {@code at} locates it in error messages. The payload is under {@code
   * payload}, or under {@code alternative} when that key is present instead.
   */
  static PushItem item(JsonNode item, String at, String alternative) {
    if (!item.isObject()) {
      throw ApiException.badRequest("Each item must be an object" + at);
    }
    JsonNode queue = item.get("queue");
    if (queue == null || !queue.isTextual()) {
      throw ApiException.badRequest("Queue must be a string" + at);
    }
    Fields.text(queue.asText(), "queue" + at);
    String partition = "Default";
    if (item.has("partition")) {
      if (!item.get("partition").isTextual()) {
        throw ApiException.badRequest("Partition must be a string" + at);
      }
      partition = Fields.text(item.get("partition").asText(), "partition" + at);
    }
    String txn = null;
    if (item.has("transactionId")) {
      if (!item.get("transactionId").isTextual()) {
        throw ApiException.badRequest("TransactionId must be a string" + at);
      }
      txn = Fields.text(item.get("transactionId").asText(), "transactionId" + at);
    }
    UUID trace = null;
    if (item.has("traceId")) {
      JsonNode t = item.get("traceId");
      if (!t.isTextual()) {
        throw ApiException.badRequest("TraceId must be a string" + at);
      }
      if (!t.asText().isEmpty()) {
        if (!Fields.isUuid(t.asText())) {
          throw ApiException.badRequest("TraceId must be a UUID" + at);
        }
        trace = UUID.fromString(t.asText());
      }
    }
    // an absent payload is stored as {}; an explicit null is stored and delivered as null
    JsonNode payload = item.has("payload") ? item.get("payload") : item.get(alternative);
    byte[] bytes = payload == null ? EMPTY_OBJECT : Json.bytes(payload);
    return new PushItem(queue.asText(), partition, bytes, txn, trace, null);
  }
}
