package queen.server.http;

import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import queen.server.push.PushItem;
import queen.server.push.RawJson;

/**
 * Reads push items with Jackson's streaming parser. A payload object or array is copied out of the
 * request as the bytes the producer sent, not parsed into a tree and written again: pushes are the
 * hottest path of the broker and payloads are opaque to it. Every item is validated before anything
 * is stored; a bad one is a 400 that names the field and the item.
 */
final class PushBody {
  private static final byte[] EMPTY_OBJECT = "{}".getBytes(StandardCharsets.UTF_8);

  private PushBody() {}

  /**
   * The items of a push request body ({@code {"items": [...]}}), stamped with the producer's token
   * subject (null without auth); a {@code producerSub} in the body is never read, so it cannot be
   * spoofed.
   */
  static List<PushItem> read(byte[] body, String producer, PushLimits limits) {
    return Json.arrayField(
        body,
        "items",
        "items array is required",
        p -> items(p, body, "", "payload", producer, limits));
  }

  /** The items of a stream's {@code push_items}, given as JSON bytes. */
  static List<PushItem> readItems(
      byte[] itemsArray, String at, String producer, PushLimits limits) {
    try (JsonParser p = Json.MAPPER.createParser(itemsArray)) {
      p.nextToken();
      return items(p, itemsArray, at, "data", producer, limits);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /**
   * Reads the array the parser stands on. {@code alternative} is the key that holds the payload
   * when {@code payload} is absent (transactions accept {@code data}).
   */
  static List<PushItem> items(
      JsonParser p,
      byte[] source,
      String at,
      String alternative,
      String producer,
      PushLimits limits)
      throws IOException {
    List<PushItem> items = new ArrayList<>();
    for (int i = 0; p.nextToken() != JsonToken.END_ARRAY; i++) {
      if (i == limits.maxItems()) {
        throw new ApiException(
            413, "items: at most " + limits.maxItems() + " per push (QUEEN_MAX_PUSH_ITEMS)" + at);
      }
      PushItem item = item(p, source, at + " (items[" + i + "])", alternative, producer);
      if (item.payload().length > limits.maxPayloadBytes()) {
        throw new ApiException(
            413,
            "payload of items["
                + i
                + "] is "
                + item.payload().length
                + " bytes, over QUEEN_MAX_PAYLOAD_BYTES ("
                + limits.maxPayloadBytes()
                + ")"
                + at);
      }
      items.add(item);
    }
    return items;
  }

  private static PushItem item(
      JsonParser p, byte[] source, String at, String alternative, String producer)
      throws IOException {
    if (p.currentToken() != JsonToken.START_OBJECT) {
      throw ApiException.badRequest("Each item must be an object" + at);
    }
    String queue = null;
    String partition = "Default";
    String txn = null;
    UUID trace = null;
    byte[] payload = null;
    byte[] fallback = null;
    boolean queueSeen = false;
    while (p.nextToken() == JsonToken.FIELD_NAME) {
      String field = p.currentName();
      JsonToken t = p.nextToken();
      switch (field) {
        case "queue" -> {
          queueSeen = true;
          queue = t == JsonToken.VALUE_STRING ? Fields.queueName(p.getText(), "queue" + at) : null;
        }
        case "partition" -> {
          if (t != JsonToken.VALUE_STRING) {
            throw ApiException.badRequest("Partition must be a string" + at);
          }
          partition = Fields.name(p.getText(), "partition" + at);
        }
        case "transactionId" -> {
          if (t != JsonToken.VALUE_STRING) {
            throw ApiException.badRequest("TransactionId must be a string" + at);
          }
          txn = Fields.transactionId(p.getText(), "transactionId" + at);
        }
        case "traceId" -> {
          if (t != JsonToken.VALUE_STRING) {
            throw ApiException.badRequest("TraceId must be a string" + at);
          }
          String text = p.getText();
          if (!text.isEmpty()) {
            if (!Fields.isUuid(text)) {
              throw ApiException.badRequest("TraceId must be a UUID" + at);
            }
            trace = UUID.fromString(text);
          }
        }
        case "payload" -> payload = RawJson.value(p, source);
        default -> {
          if (field.equals(alternative)) {
            fallback = RawJson.value(p, source);
          } else {
            p.skipChildren();
          }
        }
      }
    }
    if (!queueSeen || queue == null) {
      throw ApiException.badRequest("Queue must be a string" + at);
    }
    // an absent payload is stored as {}; an explicit null is stored and delivered as null
    byte[] body = payload != null ? payload : fallback != null ? fallback : EMPTY_OBJECT;
    return new PushItem(queue, partition, body, txn, trace, producer);
  }
}
