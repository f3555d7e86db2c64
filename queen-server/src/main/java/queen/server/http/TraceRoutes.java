package queen.server.http;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.fasterxml.jackson.databind.util.RawValue;
import java.time.InstantSource;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.UUID;
import queen.server.codec.Frame;
import queen.server.codec.UuidV7;
import queen.server.http.auth.Access;
import queen.server.store.MessageStore;
import queen.server.store.Page;
import queen.server.store.TraceStore;

/**
 * Traces of WIRE.md section 13: {@code POST /api/v1/traces} records an event against a message
 * (what {@code msg.trace()} sends from inside a consumer), and three reads: a message's traces, the
 * traces carrying a name (with their message's payload), and the names in use.
 */
public final class TraceRoutes implements Routes {
  private static final int MAX_NAMES = 32;
  private static final int MAX_NAME_LENGTH = 256;

  /** Past it, each page read every trace before it: narrow by name or message instead. */
  private static final int MAX_OFFSET = 100_000;

  private final TraceStore traces;
  private final TraceStore reads;
  private final MessageStore messages;
  private final UuidV7 ids;
  private final Payloads payloads;

  /** {@code traces} records what consumers send; {@code reads} serves the pages (admin pool). */
  public TraceRoutes(
      TraceStore traces,
      TraceStore reads,
      MessageStore messages,
      InstantSource clock,
      Payloads payloads) {
    this.payloads = payloads;
    this.traces = traces;
    this.reads = reads;
    this.messages = messages;
    this.ids = new UuidV7(clock);
  }

  @Override
  public void declare(RouteTable rules) {
    rules.post("/api/v1/traces", Access.READ_WRITE, this::record);
    rules.get("/api/v1/traces/names", Access.READ_ONLY, this::names);
    rules.get("/api/v1/traces/by-name/{name}", Access.READ_ONLY, this::byName);
    rules.get("/api/v1/traces/{partitionId}/{transactionId}", Access.READ_ONLY, this::ofMessage);
  }

  private void record(Request req, Response res) {
    JsonNode body = Json.objectBody(req);
    JsonNode txn = body.get("transactionId");
    JsonNode pid = body.get("partitionId");
    if (!nonEmptyText(txn) || !nonEmptyText(pid)) {
      throw ApiException.badRequest("transactionId and partitionId are required");
    }
    UUID partitionId = Fields.uuid(pid.asText(), "partitionId");
    String transactionId = Fields.text(txn.asText(), "transactionId");
    JsonNode data = body.get("data");
    if (data == null || data.isNull()) {
      throw ApiException.badRequest("data is required");
    }
    Fields.storableJson(data, "data");
    List<String> names = names(body.get("traceNames"));
    // a lone surrogate was stored as '?', another type than the one sent
    String eventType =
        Fields.identifier(Fields.optionalString(body, "eventType", "info"), "eventType");
    String group = Fields.optionalString(body, "consumerGroup", null);
    String worker = Fields.optionalString(body, "workerId", null);
    MessageStore.Stored message =
        messages
            .find(partitionId, transactionId)
            .orElseThrow(() -> ApiException.notFound("Message not found"));
    UUID id = ids.next();
    traces.add(id, message, transactionId, group, worker, eventType, data.toString(), names);
    Replies.json(res, 200, Json.object().put("success", true).put("traceId", id.toString()));
  }

  private static boolean nonEmptyText(JsonNode n) {
    return n != null && n.isTextual() && !n.asText().isEmpty();
  }

  /** traceNames: absent, null, one string or an array of strings; duplicates count once. */
  private static List<String> names(JsonNode n) {
    Set<String> out = new LinkedHashSet<>();
    if (n == null || n.isNull()) {
      return List.of();
    }
    if (n.isTextual()) {
      out.add(name(n));
    } else if (n.isArray()) {
      for (JsonNode e : n) {
        if (!e.isTextual()) {
          throw ApiException.badRequest("traceNames must be a string or an array of strings");
        }
        out.add(name(e));
      }
    } else {
      throw ApiException.badRequest("traceNames must be a string or an array of strings");
    }
    if (out.size() > MAX_NAMES) {
      throw ApiException.badRequest("traceNames holds at most " + MAX_NAMES + " names");
    }
    return List.copyOf(out);
  }

  private static String name(JsonNode n) {
    String s =
        Fields.notDotSegment(Fields.identifier(n.asText(), "traceNames"), "each of traceNames");
    if (s.isEmpty() || s.length() > MAX_NAME_LENGTH) {
      throw ApiException.badRequest(
          "each of traceNames must be 1 to " + MAX_NAME_LENGTH + " characters");
    }
    return s;
  }

  private void ofMessage(Request req, Response res) {
    Params p = new Params(req);
    UUID partitionId = Fields.uuid(p.path("partitionId"), "partitionId");
    MessageStore.Stored message =
        messages
            .find(partitionId, p.path("transactionId"))
            .orElseThrow(() -> ApiException.notFound("Message not found"));
    ObjectNode body = Json.object();
    ArrayNode list = body.putArray("traces");
    for (TraceStore.Trace t : reads.of(partitionId, message.offset())) {
      render(list.addObject(), t);
    }
    Replies.json(res, 200, body);
  }

  private void byName(Request req, Response res) {
    Params p = new Params(req);
    int limit = p.limit(100, 1000);
    int offset = p.offset(MAX_OFFSET);
    Page<TraceStore.Named> page = reads.byName(p.path("name"), limit, offset);
    List<UUID> pids = new ArrayList<>();
    List<Long> offsets = new ArrayList<>();
    for (TraceStore.Named n : page.items()) {
      pids.add(n.partitionId());
      offsets.add(n.offset());
    }
    List<Frame> frames = messages.framesAt(pids, offsets);
    ObjectNode body = Json.object();
    ArrayNode list = body.putArray("traces");
    for (int i = 0; i < page.items().size(); i++) {
      TraceStore.Named n = page.items().get(i);
      ObjectNode o = list.addObject();
      render(o, n.trace());
      o.put("transaction_id", n.transactionId());
      o.put("partition_id", n.partitionId().toString());
      o.put("queue_name", n.queue());
      o.put("partition_name", n.partition());
      Frame f = frames.get(i);
      Payloads.Listed data = f == null ? null : payloads.listed(f.flags(), f.payload());
      if (data == null || data.plain() == null) {
        o.putNull("message_payload");
        if (data != null) {
          o.put("message_payload_error", data.error());
        }
      } else {
        Json.putPayload(o, "message_payload", data.plain());
      }
    }
    body.put("total", page.total());
    body.putObject("pagination").put("limit", limit).put("offset", offset);
    Replies.json(res, 200, body);
  }

  private void names(Request req, Response res) {
    Params p = new Params(req);
    int limit = p.limit(50, 1000);
    int offset = p.offset(MAX_OFFSET);
    Page<TraceStore.Name> page = reads.names(limit, offset);
    ObjectNode body = Json.object();
    ArrayNode list = body.putArray("trace_names");
    for (TraceStore.Name n : page.items()) {
      list.addObject()
          .put("trace_name", n.name())
          .put("trace_count", n.traces())
          .put("message_count", n.messages())
          .put("last_seen", Json.millis(n.lastSeen()));
    }
    body.put("total", page.total());
    body.putObject("pagination").put("limit", limit).put("offset", offset);
    Replies.json(res, 200, body);
  }

  /** One trace in the wire's snake_case shape; the message detail shows its traces the same way. */
  static void render(ObjectNode o, TraceStore.Trace t) {
    o.put("id", t.id().toString());
    o.put("event_type", t.eventType());
    o.putRawValue("data", new RawValue(t.data()));
    o.put("consumer_group", t.consumerGroup());
    o.put("worker_id", t.workerId());
    o.put("created_at", Json.millis(t.createdAt()));
    ArrayNode names = o.putArray("trace_names");
    t.names().forEach(names::add);
  }
}
