package queen.server.http;

import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.atomic.AtomicReference;
import queen.server.push.PushItem;

/**
 * Reads a transaction request ({@code {"operations": [...]}}) with the streaming parser, as {@link
 * PushBody} reads a push: the payloads of its push operations are the bytes the producer sent (a
 * tree written again turned 12345678901234567.89 into 1.2345678901234568E16), and no tree of the
 * request is built: a body of empty objects made a tree of 85 bytes for every 3. Operations, and
 * their items in all, are at most QUEEN_MAX_PUSH_ITEMS each.
 */
final class TransactionBody {
  /**
   * One operation: its known scalar fields as they are and its known object or array fields as
   * empty ones (an ack reads scalars only), and its items when {@code items} is an array (null
   * otherwise).
   */
  record Operation(int index, ObjectNode fields, List<PushItem> items) {
    String at() {
      return " (operations[" + index + "])";
    }
  }

  /**
   * The fields an operation is read by; others are skipped unread (kept, a body of a million
   * distinct fields made a tree of a gigabyte).
   */
  private static final Set<String> FIELDS =
      Set.of("type", "transactionId", "partitionId", "consumerGroup", "status", "leaseId", "error");

  /**
   * The operations, and the strings of {@code requiredLeases}: none when it is absent or anything
   * but an array of strings (Queen ignored the field, so a client's odd value there must not start
   * failing its requests); the last of a repeated field, as for {@code operations}.
   */
  record Read(List<Operation> operations, List<String> requiredLeases) {}

  private TransactionBody() {}

  static Read read(byte[] body, String producer, PushLimits limits) {
    AtomicReference<List<String>> leases = new AtomicReference<>(List.of());
    List<Operation> ops =
        Json.arrayField(
            body,
            "operations",
            "operations array required",
            p -> operations(p, body, producer, limits),
            (name, p) -> {
              if (name.equals("requiredLeases")) {
                leases.set(p.currentToken() == JsonToken.START_ARRAY ? strings(p) : List.of());
              }
              p.skipChildren();
            });
    if (ops.isEmpty()) {
      throw ApiException.badRequest("operations array cannot be empty");
    }
    return new Read(ops, leases.get());
  }

  /** The array the parser stands on, when it holds strings only; else none. */
  private static List<String> strings(JsonParser p) throws IOException {
    List<String> out = new ArrayList<>();
    boolean strings = true;
    while (p.nextToken() != JsonToken.END_ARRAY) {
      if (p.currentToken() == JsonToken.VALUE_STRING) {
        out.add(p.getText());
      } else {
        strings = false;
        p.skipChildren();
      }
    }
    return strings ? out : List.of();
  }

  private static List<Operation> operations(
      JsonParser p, byte[] body, String producer, PushLimits limits) throws IOException {
    List<Operation> ops = new ArrayList<>();
    int pushed = 0;
    for (int i = 0; p.nextToken() != JsonToken.END_ARRAY; i++) {
      String at = " (operations[" + i + "])";
      if (i == limits.maxItems()) {
        throw new ApiException(
            413,
            "operations: at most " + limits.maxItems() + " per transaction (QUEEN_MAX_PUSH_ITEMS)");
      }
      if (p.currentToken() != JsonToken.START_OBJECT) {
        throw ApiException.badRequest("Each operation must be an object" + at);
      }
      ObjectNode fields = Json.object();
      List<PushItem> items = null;
      while (p.nextToken() == JsonToken.FIELD_NAME) {
        String field = p.currentName();
        JsonToken t = p.nextToken();
        if (field.equals("items") && t == JsonToken.START_ARRAY) {
          items = PushBody.items(p, body, at, "data", producer, limits);
          pushed += items.size();
          if (pushed > limits.maxItems()) {
            throw new ApiException(
                413,
                "items: at most "
                    + limits.maxItems()
                    + " per transaction (QUEEN_MAX_PUSH_ITEMS)"
                    + at);
          }
        } else if (t == JsonToken.START_OBJECT || t == JsonToken.START_ARRAY) {
          p.skipChildren();
          if (FIELDS.contains(field)) {
            fields.set(
                field, t == JsonToken.START_OBJECT ? Json.object() : Json.MAPPER.createArrayNode());
          }
        } else if (FIELDS.contains(field)) {
          fields.set(field, p.<JsonNode>readValueAsTree());
        }
      }
      ops.add(new Operation(i, fields, items));
    }
    return ops;
  }
}
