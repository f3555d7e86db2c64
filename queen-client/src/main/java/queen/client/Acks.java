package queen.client;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Sends acks: one message to {@code /api/v1/ack}, several to {@code /api/v1/ack/batch}, one request
 * per consumer group (the batch route takes the group once, at the top).
 */
final class Acks {
  private Acks() {}

  static List<AckResult> send(Queen queen, List<Message> messages, String status, String error) {
    if (status == null || status.isBlank()) {
      throw new IllegalArgumentException("ack status must not be blank");
    }
    for (Message m : messages) {
      if (m.transactionId() == null || m.partitionId() == null) {
        throw new IllegalArgumentException(
            "a message needs transactionId and partitionId to be acked: " + m);
      }
    }
    Map<String, List<Integer>> byGroup = new LinkedHashMap<>();
    for (int i = 0; i < messages.size(); i++) {
      byGroup.computeIfAbsent(messages.get(i).consumerGroup(), g -> new ArrayList<>()).add(i);
    }
    AckResult[] out = new AckResult[messages.size()];
    byGroup.forEach(
        (group, indexes) -> {
          List<Message> some = indexes.stream().map(messages::get).toList();
          List<AckResult> results = sendGroup(queen, group, some, status, error);
          for (int k = 0; k < indexes.size(); k++) {
            out[indexes.get(k)] = results.get(k);
          }
        });
    return List.of(out);
  }

  private static List<AckResult> sendGroup(
      Queen queen, String group, List<Message> messages, String status, String error) {
    Message first = messages.getFirst();
    String key = first.queue() + ":" + first.partition() + ":" + group;
    JsonNode body;
    if (messages.size() == 1) {
      Map<String, Object> one = item(first, status, error);
      one.put("consumerGroup", group);
      body = queen.transport.send(Transport.Call.post("/api/v1/ack", one, key)).body();
    } else {
      List<Map<String, Object>> items = new ArrayList<>(messages.size());
      for (Message m : messages) {
        items.add(item(m, status, error));
      }
      Map<String, Object> request = new LinkedHashMap<>();
      request.put("acknowledgments", items);
      request.put("consumerGroup", group);
      body = queen.transport.send(Transport.Call.post("/api/v1/ack/batch", request, key)).body();
    }
    if (!body.isArray() || body.size() != messages.size()) {
      throw new QueenException(0, "unexpected ack answer: " + body);
    }
    List<AckResult> results = new ArrayList<>(messages.size());
    for (JsonNode r : body) {
      results.add(
          new AckResult(
              Json.text(r, "transactionId"),
              r.path("success").asBoolean(false),
              Json.text(r, "error"),
              r.path("leaseReleased").asBoolean(false),
              r.path("dlq").asBoolean(false)));
    }
    return results;
  }

  private static Map<String, Object> item(Message m, String status, String error) {
    Map<String, Object> item = new LinkedHashMap<>();
    item.put("transactionId", m.transactionId());
    item.put("partitionId", m.partitionId());
    item.put("status", status);
    item.put("error", error);
    if (m.leaseId() != null && !m.leaseId().isEmpty()) {
      item.put("leaseId", m.leaseId());
    }
    return item;
  }
}
