package queen.client;

import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.NullNode;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.time.Instant;

/** The client's one Jackson mapper and the conversions every wire type shares. */
final class Json {
  static final ObjectMapper MAPPER =
      new ObjectMapper().disable(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES);

  private Json() {}

  static JsonNode tree(Object value) {
    return value == null ? NullNode.getInstance() : MAPPER.valueToTree(value);
  }

  static byte[] bytes(Object value) {
    try {
      return MAPPER.writeValueAsBytes(value);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  static JsonNode parse(byte[] body) {
    try {
      return body.length == 0 ? NullNode.getInstance() : MAPPER.readTree(body);
    } catch (IOException e) {
      throw new QueenException(0, "the broker answered with invalid JSON: " + e.getMessage());
    }
  }

  static <T> T convert(JsonNode node, Class<T> type) {
    try {
      return MAPPER.treeToValue(node, type);
    } catch (IOException e) {
      throw new IllegalArgumentException(
          "cannot read the payload as " + type.getName() + ": " + e.getMessage(), e);
    }
  }

  /** A text field, or null when absent or JSON null. */
  static String text(JsonNode node, String field) {
    JsonNode v = node.get(field);
    return v == null || v.isNull() ? null : v.asText();
  }

  static Instant instant(JsonNode node, String field) {
    String v = text(node, field);
    return v == null ? null : Instant.parse(v);
  }
}
