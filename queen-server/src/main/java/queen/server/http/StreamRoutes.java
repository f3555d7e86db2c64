package queen.server.http;

import com.fasterxml.jackson.core.JsonGenerator;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import java.util.UUID;
import queen.server.http.auth.Access;
import queen.server.ops.Statistics;
import queen.server.push.PushItem;
import queen.server.push.PushResult;
import queen.server.store.AckOutcome;
import queen.server.store.StreamStore;
import queen.server.streams.StreamCycles;

/**
 * The streaming SDK's routes (WIRE.md section 17): register a query, run a cycle, read state. A
 * malformed request is a 400 naming the field; a cycle refused for a business reason (unknown
 * query, unknown state operation, an ack the lease does not allow) is a 200 with {@code
 * success:false}, and nothing of it is applied: the SDK retries the cycle after redelivery.
 */
public final class StreamRoutes implements Routes {
  /** Longer keys would not fit the state table's primary key index (a btree entry limit). */
  static final int MAX_KEY_BYTES = 1024;

  private static final Set<String> ACK_STATUSES =
      Set.of("completed", "success", "failed", "retry", "dlq");

  private final StreamCycles streams;
  private final Statistics stats;
  private final PushLimits limits;

  public StreamRoutes(StreamCycles streams, Statistics stats, PushLimits limits) {
    this.streams = streams;
    this.stats = stats;
    this.limits = limits;
  }

  @Override
  public void declare(RouteTable rules) {
    rules.post("/streams/v1/queries", Access.READ_WRITE, (req, res) -> register(req, res));
    rules.post(
        "/streams/v1/cycle",
        Access.READ_WRITE,
        (req, res) -> Replies.json(res, 200, cycle(Json.objectBody(req), Gate.subject(req))));
    rules.post(
        "/streams/v1/state/get",
        Access.READ_ONLY,
        (req, res) -> {
          JsonNode body = Json.objectBody(req);
          UUID query = uuid(body, "query_id");
          UUID partition = uuid(body, "partition_id");
          Replies.json(res, 200, state(query, partition, stateFilter(body)));
        });
  }

  /**
   * {@code {success, rows: [{key, value, updated_at}]}}, each value written as PostgreSQL gives it:
   * no list or tree of the rows is held beside the answer.
   */
  private byte[] state(UUID query, UUID partition, StreamStore.StateFilter filter)
      throws IOException {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    try (JsonGenerator g = Json.MAPPER.getFactory().createGenerator(out)) {
      g.writeStartObject();
      g.writeBooleanField("success", true);
      g.writeArrayFieldStart("rows");
      streams.state(
          query,
          partition,
          filter,
          r -> {
            try {
              g.writeStartObject();
              g.writeStringField("key", r.key());
              g.writeFieldName("value");
              g.writeRawValue(r.json());
              g.writeStringField("updated_at", Json.millis(r.updatedAt()));
              g.writeEndObject();
            } catch (IOException e) {
              throw new UncheckedIOException(e);
            }
          });
      g.writeEndArray();
      g.writeEndObject();
    }
    return out.toByteArray();
  }

  private void register(Request req, Response res) {
    JsonNode body = Json.objectBody(req);
    String name = Fields.name(required(body, "name"), "name");
    String source = Fields.queueName(required(body, "source_queue"), "source_queue");
    String sink = Fields.optionalString(body, "sink_queue", null);
    if (sink != null) {
      sink = sink.isEmpty() ? null : Fields.queueName(sink, "sink_queue");
    }
    // compared with what is stored: a lone surrogate, stored as '?', never compared equal (409)
    String hash = Fields.identifier(required(body, "config_hash"), "config_hash");
    boolean reset = flag(body, "reset", false);
    StreamStore.Registration r = streams.register(name, source, sink, hash, reset);
    String conflict = null;
    if (!r.registeredHash().equals(hash)) {
      conflict = "config_hash " + r.registeredHash() + ", not " + hash;
    } else if (!r.sourceQueue().equals(source) || !Objects.equals(r.sinkQueue(), sink)) {
      conflict =
          "source_queue "
              + r.sourceQueue()
              + " and sink_queue "
              + r.sinkQueue()
              + ", not "
              + source
              + " and "
              + sink;
    }
    if (conflict != null) {
      ObjectNode out =
          Json.object()
              .put(
                  "error",
                  "query "
                      + name
                      + " is registered with "
                      + conflict
                      + ": register with reset: true to replace it and delete the query's state")
              .put("success", false)
              .put("query_id", r.queryId().toString())
              .put("registered_config_hash", r.registeredHash())
              .put("config_hash", hash);
      Replies.json(res, 409, out);
      return;
    }
    Replies.json(
        res,
        200,
        Json.object()
            .put("success", true)
            .put("query_id", r.queryId().toString())
            .put("name", name)
            .put("config_hash", hash)
            .put("fresh", r.fresh())
            .put("reset", r.reset()));
  }

  private ObjectNode cycle(JsonNode body, String producer) {
    UUID query = uuid(body, "query_id");
    UUID partition = uuid(body, "partition_id");
    String group = Fields.optionalString(body, "consumer_group", PopRoutes.QUEUE_MODE);
    group = group.isEmpty() ? PopRoutes.QUEUE_MODE : Fields.name(group, "consumer_group");
    List<StreamStore.StateOp> ops = new ArrayList<>();
    JsonNode stateOps = array(body, "state_ops");
    for (int i = 0; i < stateOps.size(); i++) {
      JsonNode op = stateOps.get(i);
      String at = "state_ops[" + i + "]";
      if (!op.isObject()) {
        throw ApiException.badRequest(at + " must be an object");
      }
      String type = opText(op, "type", at);
      String key = opText(op, "key", at);
      if (key.getBytes(StandardCharsets.UTF_8).length > MAX_KEY_BYTES) {
        throw ApiException.badRequest(at + ".key must be at most " + MAX_KEY_BYTES + " bytes");
      }
      switch (type) {
        case "upsert" -> ops.add(new StreamStore.StateOp(key, value(op.get("value"), at)));
        case "delete" -> ops.add(new StreamStore.StateOp(key, null));
        default -> {
          return failure(query, partition, "Unknown state_op type: " + type + " (" + at + ")");
        }
      }
    }
    List<PushItem> items =
        PushBody.readItems(
            Json.bytes(array(body, "push_items")), " (push_items)", producer, limits);
    StreamStore.CycleAck ack = ack(body.get("ack"));
    if (ack != null && !ACK_STATUSES.contains(ack.status())) {
      return failure(query, partition, "Unknown ack status: " + ack.status());
    }
    if (ack != null
        && (ack.status().equals("failed") || ack.status().equals("retry"))
        && (!ops.isEmpty() || !items.isEmpty())) {
      // the message comes back: state and outputs would change again when it is processed
      return failure(
          query,
          partition,
          "a "
              + ack.status()
              + " ack cannot carry state_ops or push_items:"
              + " the message is delivered again");
    }
    if (ack != null && ack.leaseId() == null) {
      return failure(query, partition, "ack failed: Invalid or expired lease");
    }
    boolean release = flag(body, "release_lease", true);
    StreamCycles.Outcome o =
        streams.run(new StreamCycles.Cycle(query, partition, group, ops, items, ack, release));
    if (!o.success()) {
      return failure(query, partition, o.error());
    }
    ObjectNode out =
        Json.object()
            .put("success", true)
            .put("query_id", query.toString())
            .put("partition_id", partition.toString())
            .put("queueName", o.sourceQueue())
            .put("state_ops_applied", o.stateOpsApplied());
    ArrayNode pushes = out.putArray("push_results");
    for (int i = 0; i < o.pushes().size(); i++) {
      PushResult p = o.pushes().get(i);
      pushes
          .addObject()
          .put("index", i)
          .put("status", p.status() == PushResult.Status.QUEUED ? "queued" : "duplicate")
          .put("transaction_id", p.transactionId())
          .put("message_id", p.messageId().toString())
          .put("partition_id", p.partitionId().toString())
          .put("queueName", p.queue());
    }
    AckOutcome a = o.ack();
    if (a == null) {
      out.putNull("ack_result");
    } else {
      // every message the ack consumed: one count a cycle showed a fraction of the stream's work
      stats.acknowledged(a.queueName(), ack.status(), a.dlq(), o.acked());
      out.putObject("ack_result")
          .put("success", true)
          .put("lease_released", a.leaseEnded())
          .put("dlq", a.dlq());
    }
    return out;
  }

  /**
   * What a state read asks for, as Queen's runners send it: {@code keys} (absent, null or empty:
   * every key), {@code key_prefix} (absent, null or empty: any key) and {@code ripe_at_or_before}
   * (epoch ms: only windows whose {@code windowEnd} is a number at most that, as their idle flush
   * asks).
   */
  private static StreamStore.StateFilter stateFilter(JsonNode body) {
    List<String> keys = new ArrayList<>();
    JsonNode k = body.get("keys");
    if (k != null && !k.isNull()) {
      if (!k.isArray()) {
        throw ApiException.badRequest("keys must be an array of strings");
      }
      for (JsonNode key : k) {
        if (!key.isTextual()) {
          throw ApiException.badRequest("keys must be an array of strings");
        }
        keys.add(Fields.text(key.asText(), "keys"));
      }
    }
    JsonNode prefix = body.get("key_prefix");
    if (prefix != null && !prefix.isNull() && !prefix.isTextual()) {
      throw ApiException.badRequest("key_prefix must be a string");
    }
    String p = prefix == null || prefix.isNull() ? "" : Fields.text(prefix.asText(), "key_prefix");
    JsonNode ripe = body.get("ripe_at_or_before");
    if (ripe != null && !ripe.isNull() && !ripe.isNumber()) {
      throw ApiException.badRequest("ripe_at_or_before must be a number (epoch milliseconds)");
    }
    return new StreamStore.StateFilter(
        keys, p.isEmpty() ? null : p, ripe == null || ripe.isNull() ? null : ripe.decimalValue());
  }

  /** The ack of a cycle, or null; a lease id that is no UUID cannot name a live lease. */
  private static StreamStore.CycleAck ack(JsonNode ack) {
    if (ack == null || ack.isNull()) {
      return null;
    }
    if (!ack.isObject()) {
      throw ApiException.badRequest("ack must be an object or null");
    }
    String txn = Fields.optionalString(ack, "transactionId", null);
    if (txn == null || txn.isEmpty()) {
      throw ApiException.badRequest("ack.transactionId is required");
    }
    String lease = Fields.optionalString(ack, "leaseId", null);
    if (lease == null || lease.isEmpty()) {
      throw ApiException.badRequest("ack.leaseId is required");
    }
    String status = Fields.optionalString(ack, "status", "completed");
    String error = Fields.optionalString(ack, "error", null);
    if (error == null) {
      error = "dlq".equals(status) ? "Dead-lettered by a stream cycle" : "Retries exhausted";
    }
    return new StreamStore.CycleAck(
        txn, Fields.isUuid(lease) ? UUID.fromString(lease) : null, status, error);
  }

  private static ObjectNode failure(UUID query, UUID partition, String error) {
    ObjectNode out =
        Json.object()
            .put("success", false)
            .put("query_id", query.toString())
            .put("partition_id", partition.toString())
            .put("error", error)
            .put("state_ops_applied", 0);
    out.putArray("push_results");
    out.putNull("ack_result");
    return out;
  }

  private static String required(JsonNode body, String field) {
    String v = Fields.optionalString(body, field, "");
    if (v.isBlank()) {
      throw ApiException.badRequest(field + " is required");
    }
    return v;
  }

  private static UUID uuid(JsonNode body, String field) {
    return Fields.uuid(required(body, field), field);
  }

  private static JsonNode array(JsonNode body, String field) {
    JsonNode v = body.get(field);
    if (v == null || v.isNull()) {
      return Json.MAPPER.createArrayNode();
    }
    if (!v.isArray()) {
      throw ApiException.badRequest(field + " must be an array");
    }
    return v;
  }

  private static boolean flag(JsonNode body, String field, boolean fallback) {
    JsonNode v = body.get(field);
    if (v == null || v.isNull()) {
      return fallback;
    }
    if (!v.isBoolean()) {
      throw ApiException.badRequest(field + " must be true or false");
    }
    return v.asBoolean();
  }

  /**
   * A state value as JSON text; an absent value is JSON null. PostgreSQL's jsonb cannot hold a NUL
   * character: one is a client mistake (400), not a database error.
   */
  private static String value(JsonNode v, String at) {
    if (v == null) {
      return "null";
    }
    Fields.storableJson(v, at + ".value");
    return new String(Json.bytes(v), StandardCharsets.UTF_8);
  }

  /** A required non-empty string of a state operation. */
  private static String opText(JsonNode op, String field, String at) {
    JsonNode v = op.get(field);
    if (v == null || v.isNull() || (v.isTextual() && v.asText().isEmpty())) {
      throw ApiException.badRequest(at + "." + field + " is required");
    }
    if (!v.isTextual()) {
      throw ApiException.badRequest(at + "." + field + " must be a string");
    }
    Fields.storableText(v.asText(), at + "." + field);
    return v.asText();
  }
}
