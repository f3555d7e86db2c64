package queen.cli;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.PrintWriter;
import java.io.UncheckedIOException;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CharsetDecoder;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Consumer;
import queen.client.DeadLetter;
import queen.client.Message;
import queen.client.PushResult;

/** One JSON value per line, on stdout and from stdin. */
final class Ndjson {
  /** Reads one value only: {"a":1},{"a":2} pushed the first and dropped the rest. */
  static final ObjectMapper MAPPER =
      new ObjectMapper().enable(DeserializationFeature.FAIL_ON_TRAILING_TOKENS);

  private Ndjson() {}

  static void print(PrintWriter out, JsonNode node) {
    out.println(node.toString());
  }

  static ObjectNode message(Message m) {
    ObjectNode n = MAPPER.createObjectNode();
    n.put("id", m.id());
    n.put("transactionId", m.transactionId());
    n.put("queue", m.queue());
    n.put("partition", m.partition());
    n.put("partitionId", m.partitionId());
    n.put("leaseId", m.leaseId());
    n.put("consumerGroup", m.consumerGroup());
    n.put("createdAt", time(m.createdAt()));
    n.put("traceId", m.traceId());
    n.set("data", m.data());
    return n;
  }

  static ObjectNode pushResult(PushResult r) {
    ObjectNode n = MAPPER.createObjectNode();
    n.put("status", r.status());
    n.put("transactionId", r.transactionId());
    n.put("messageId", r.messageId());
    n.put("partitionId", r.partitionId());
    if (r.error() != null) {
      n.put("error", r.error());
    }
    return n;
  }

  static ObjectNode deadLetter(DeadLetter d) {
    ObjectNode n = MAPPER.createObjectNode();
    n.put("id", d.id());
    n.put("transactionId", d.transactionId());
    n.put("queue", d.queue());
    n.put("partition", d.partition());
    n.put("partitionId", d.partitionId());
    n.put("consumerGroup", d.consumerGroup());
    n.put("errorMessage", d.errorMessage());
    n.put("retryCount", d.retryCount());
    n.put("createdAt", time(d.createdAt()));
    n.put("failedAt", time(d.failedAt()));
    n.set("data", d.data());
    return n;
  }

  /** A message as {@link #message} printed it, read back for an ack. */
  static Message readMessage(JsonNode n) {
    return Message.fromJson(n);
  }

  /** Every non-blank line of stdin, parsed; a line that is not JSON is an error naming it. */
  static List<JsonNode> readStdin() {
    List<JsonNode> out = new ArrayList<>();
    readStdin(Integer.MAX_VALUE, out::addAll);
    return out;
  }

  /**
   * Hands stdin's non-blank lines, parsed, to {@code sink} as they come: up to {@code chunk} at a
   * time, fewer when no more input is waiting (a slow stream's lines go at once). A line that is
   * not JSON is an error naming it, once every line before it was handed on, however the input was
   * chunked. Bytes that are not UTF-8 are an error naming the line they are at or after, once the
   * lines decoded before it were handed on: the reader drops what it decoded with them.
   */
  static void readStdin(int chunk, Consumer<List<JsonNode>> sink) {
    List<JsonNode> lines = new ArrayList<>();
    // bytes that are not UTF-8 refused, not pushed as U+FFFD
    CharsetDecoder utf8 =
        StandardCharsets.UTF_8
            .newDecoder()
            .onMalformedInput(CodingErrorAction.REPORT)
            .onUnmappableCharacter(CodingErrorAction.REPORT);
    int no = 0;
    try (BufferedReader r = new BufferedReader(new InputStreamReader(System.in, utf8))) {
      String line;
      while ((line = r.readLine()) != null) {
        no++;
        if (!line.isBlank()) {
          try {
            lines.add(parse(line, "stdin line " + no));
          } catch (IllegalArgumentException e) {
            handOn(lines, sink);
            throw e;
          }
        }
        if (!lines.isEmpty() && (lines.size() >= chunk || !r.ready())) {
          sink.accept(lines);
          lines = new ArrayList<>();
        }
      }
    } catch (CharacterCodingException e) {
      handOn(lines, sink);
      // the decoder reads ahead: the bad bytes are on this line or a later one
      throw new IllegalArgumentException("stdin is not UTF-8 at or after line " + (no + 1));
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    handOn(lines, sink);
  }

  private static void handOn(List<JsonNode> lines, Consumer<List<JsonNode>> sink) {
    if (!lines.isEmpty()) {
      sink.accept(lines);
    }
  }

  static JsonNode parse(String text, String where) {
    try {
      JsonNode node = MAPPER.readTree(text);
      if (node == null || node.isMissingNode()) {
        throw new IllegalArgumentException(where + " is empty, not JSON"); // an unset "$VAR"
      }
      return node;
    } catch (JsonProcessingException e) {
      throw new IllegalArgumentException(
          where + " is not JSON: " + e.getOriginalMessage() + " (" + abbreviate(text) + ")");
    }
  }

  private static String abbreviate(String s) {
    return s.length() > 60 ? s.substring(0, 60) + "..." : s;
  }

  private static String text(JsonNode n, String field) {
    return n.hasNonNull(field) ? n.get(field).asText() : null;
  }

  private static String time(Instant t) {
    return t == null ? null : t.toString();
  }
}
