package queen.client;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;

/** Turns what a caller pushes into wire items, and sends them. */
final class PushItems {
  private PushItems() {}

  /**
   * The wire item for one pushed value: an object with a {@code data} (or else {@code payload})
   * field is an envelope whose {@code transactionId} and {@code traceId} are kept; anything else is
   * the payload. Every item leaves with a transaction id, so retries are deduplicated.
   */
  static ObjectNode envelope(String queue, String partition, Object item) {
    JsonNode tree = Json.tree(item);
    JsonNode payload = tree;
    String transactionId = null;
    String traceId = null;
    if (tree.isObject() && (tree.has("data") || tree.has("payload"))) {
      payload = tree.has("data") ? tree.get("data") : tree.get("payload");
      transactionId = Json.text(tree, "transactionId");
      traceId = Json.text(tree, "traceId");
    }
    if (traceId != null && !isUuid(traceId)) {
      throw new IllegalArgumentException("traceId must be a UUID, got '" + traceId + "'");
    }
    ObjectNode out = Json.MAPPER.createObjectNode();
    out.put("queue", queue);
    out.put("partition", partition);
    out.set("payload", payload);
    out.put(
        "transactionId",
        transactionId == null || transactionId.isEmpty()
            ? UuidV7.next().toString()
            : transactionId);
    if (traceId != null) {
      out.put("traceId", traceId);
    }
    return out;
  }

  /** One push request; throws if the broker reports any item {@code failed}. */
  static List<PushResult> send(Queen queen, List<ObjectNode> items, String key) {
    if (items.isEmpty()) {
      return List.of();
    }
    ObjectNode body = Json.MAPPER.createObjectNode();
    ArrayNode array = body.putArray("items");
    items.forEach(array::add);
    JsonNode answer = queen.transport.send(Transport.Call.post("/api/v1/push", body, key)).body();
    if (!answer.isArray() || answer.size() != items.size()) {
      throw new QueenException(0, "unexpected push answer: " + answer);
    }
    List<PushResult> results = new ArrayList<>(items.size());
    List<String> failures = new ArrayList<>();
    for (int i = 0; i < items.size(); i++) {
      JsonNode r = answer.get(i);
      String txn = Json.text(r, "transaction_id");
      PushResult result =
          new PushResult(
              r.path("status").asText(""),
              txn == null ? items.get(i).get("transactionId").asText() : txn,
              Json.text(r, "message_id"),
              Json.text(r, "partition_id"),
              Json.text(r, "error"));
      if ("failed".equals(result.status())) {
        failures.add(result.transactionId() + ": " + result.error());
      }
      results.add(result);
    }
    if (!failures.isEmpty()) {
      throw new QueenException(0, "push failed for " + failures);
    }
    return results;
  }

  static boolean isUuid(String s) {
    try {
      return UUID.fromString(s).toString().equalsIgnoreCase(s);
    } catch (IllegalArgumentException e) {
      return false;
    }
  }
}
