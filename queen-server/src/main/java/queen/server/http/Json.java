package queen.server.http;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.JsonToken;
import com.fasterxml.jackson.core.StreamReadConstraints;
import com.fasterxml.jackson.core.exc.StreamConstraintsException;
import com.fasterxml.jackson.core.util.JsonRecyclerPools;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.cfg.JsonNodeFeature;
import com.fasterxml.jackson.databind.json.JsonMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.fasterxml.jackson.databind.util.RawValue;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;

/** The broker's one JSON mapper and the timestamp formats of the wire contract. */
final class Json {
  /**
   * Buffer sets kept for reuse. Bodies are parsed from arrays and answers written to arrays, so
   * JSON work holds a set only while it runs on a core; more at once allocate and drop their own.
   */
  private static final int POOLED_BUFFERS = 16;

  /**
   * Decimals in trees are kept as written (a double turned a payload's 12345678901234567.89 into
   * 1.2345678901234568E16 when a tree was written again).
   */
  static final ObjectMapper MAPPER =
      JsonMapper.builder(
              // parser and generator buffers come from one bounded pool: Jackson's default keeps
              // them per thread, and every request runs on a new virtual thread, so each request
              // allocated them again (docs/benchmarks.md)
              JsonFactory.builder()
                  .recyclerPool(JsonRecyclerPools.newBoundedPool(POOLED_BUFFERS))
                  .build())
          .enable(DeserializationFeature.USE_BIG_DECIMAL_FOR_FLOATS)
          // and with their scale: a stream cycle's push_items are written again from a tree, and
          // Jackson's default turned a payload's 2.50 into 2.5 there (/push keeps the bytes)
          .disable(JsonNodeFeature.STRIP_TRAILING_BIGDECIMAL_ZEROES)
          .build();

  /** JSON tokens in a body read whole into a tree (every route but push and transaction). */
  static final long MAX_TREE_TOKENS = 1_000_000;

  /**
   * The mapper of bodies read whole: a tree costs up to 30 times its body in heap, so it is bounded
   * by tokens rather than by the body limit alone (10,000 acks are about 150,000 tokens).
   */
  private static final ObjectMapper TREES = MAPPER.copy();

  static {
    // payloads are the users' own documents: allow big ones, the body limit bounds them
    MAPPER
        .getFactory()
        .setStreamReadConstraints(
            StreamReadConstraints.builder().maxStringLength(Integer.MAX_VALUE).build());
    TREES
        .getFactory()
        .setStreamReadConstraints(
            StreamReadConstraints.builder()
                .maxStringLength(Integer.MAX_VALUE)
                .maxTokenCount(MAX_TREE_TOKENS)
                .build());
  }

  /** Popped messages carry microseconds: {@code 2026-05-16T08:41:27.123456Z}. */
  private static final DateTimeFormatter MICROS =
      DateTimeFormatter.ofPattern("yyyy-MM-dd'T'HH:mm:ss.SSSSSS'Z'").withZone(ZoneOffset.UTC);

  /** Every other endpoint uses milliseconds: {@code 2026-05-16T08:41:27.123Z}. */
  private static final DateTimeFormatter MILLIS =
      DateTimeFormatter.ofPattern("yyyy-MM-dd'T'HH:mm:ss.SSS'Z'").withZone(ZoneOffset.UTC);

  private Json() {}

  static String micros(long epochMicros) {
    return MICROS.format(Instant.EPOCH.plusNanos(epochMicros * 1_000));
  }

  static String millis(Instant t) {
    return MILLIS.format(t);
  }

  /** {@link #millis}, or null for no time. */
  static String millisOrNull(Instant t) {
    return t == null ? null : millis(t);
  }

  /** A stored payload (JSON text) put under {@code field} as it is, without re-parsing it. */
  static void putPayload(ObjectNode node, String field, byte[] payload) {
    node.putRawValue(field, new RawValue(new String(payload, StandardCharsets.UTF_8)));
  }

  static ObjectNode object() {
    return MAPPER.createObjectNode();
  }

  static byte[] bytes(JsonNode node) {
    try {
      return MAPPER.writeValueAsBytes(node);
    } catch (JsonProcessingException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** Reads the array the parser stands on. */
  interface ArrayReader<T> {
    T read(JsonParser p) throws IOException;
  }

  /** Reads, or skips, the value of a top-level field the parser stands on. */
  interface FieldReader {
    void read(String name, JsonParser p) throws IOException;
  }

  /**
   * The array under {@code field} of a body that is a JSON object, read by {@code reader} with the
   * streaming parser (no tree of the body); other fields are skipped. Empty, malformed, not an
   * object, or without that array is a 400 ({@code missing} says the last).
   */
  static <T> T arrayField(byte[] body, String field, String missing, ArrayReader<T> reader) {
    return arrayField(body, field, missing, reader, (name, p) -> p.skipChildren());
  }

  /**
   * As {@link #arrayField}, the other top-level fields given to {@code others} in the same pass.
   */
  static <T> T arrayField(
      byte[] body, String field, String missing, ArrayReader<T> reader, FieldReader others) {
    if (body.length == 0) {
      throw ApiException.badRequest("Empty request body");
    }
    try (JsonParser p = MAPPER.createParser(body)) {
      if (p.nextToken() != JsonToken.START_OBJECT) {
        throw ApiException.badRequest("Request body must be a JSON object");
      }
      if (p.currentTokenLocation().getByteOffset() < 0) {
        // UTF-16 or UTF-32, which Jackson reads through a decoder: its positions are not offsets
        // into the bytes that the payloads are taken from verbatim (a 500 on every such push)
        throw ApiException.badRequest("Request body must be UTF-8 JSON");
      }
      T value = null;
      while (p.nextToken() == JsonToken.FIELD_NAME) {
        String name = p.currentName();
        p.nextToken();
        if (!name.equals(field)) {
          others.read(name, p);
        } else if (p.currentToken() == JsonToken.START_ARRAY) {
          value = reader.read(p);
        } else {
          value = null;
          p.skipChildren();
        }
      }
      if (p.nextToken() != null) {
        throw ApiException.badRequest("Invalid JSON: content after the request object");
      }
      if (value == null) {
        throw ApiException.badRequest(missing);
      }
      return value;
    } catch (JsonProcessingException e) {
      throw ApiException.badRequest("Invalid JSON: " + e.getOriginalMessage());
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** The request body as a JSON object; empty, malformed or not an object is a 400. */
  static JsonNode objectBody(Request req) {
    return objectBody(req.body());
  }

  /** As {@link #objectBody(Request)}, of a body already read. */
  static JsonNode objectBody(byte[] body) {
    JsonNode node = parse(body);
    if (!node.isObject()) {
      throw ApiException.badRequest("Request body must be a JSON object");
    }
    return node;
  }

  private static JsonNode parse(byte[] body) {
    if (body.length == 0) {
      throw ApiException.badRequest("Empty request body");
    }
    try {
      JsonNode node = TREES.readTree(body);
      if (node == null || node.isMissingNode()) {
        throw ApiException.badRequest("Empty request body");
      }
      return node;
    } catch (StreamConstraintsException e) {
      if (e.getMessage().contains("getMaxTokenCount")) {
        throw new ApiException(
            413, "Request body: more than " + MAX_TREE_TOKENS + " JSON tokens on this route");
      }
      throw ApiException.badRequest("Invalid JSON: " + e.getOriginalMessage());
    } catch (JsonProcessingException e) {
      throw ApiException.badRequest("Invalid JSON: " + e.getOriginalMessage());
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }
}
