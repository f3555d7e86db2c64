package queen.server.http;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.time.Duration;
import java.time.Instant;
import java.time.InstantSource;
import java.time.temporal.ChronoUnit;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.UUID;
import queen.server.codec.Frame;
import queen.server.http.auth.Access;
import queen.server.store.MessageRemoval;
import queen.server.store.MessageStore;
import queen.server.store.TraceStore;

/**
 * Message browsing of WIRE.md section 13: a list newest first without payloads, and one message
 * with its payload, its status for every group that reads its partition, and its traces.
 */
public final class MessageRoutes implements Routes {
  private static final Set<String> STATUSES =
      Set.of("pending", "processing", "completed", "dead_letter");

  /** Queen's Go CLI lists {@code --status failed}: the messages that ended in the dead letters. */
  private static final String FAILED = "failed";

  private static final String QUEUE_MODE = MessageStore.QUEUE_MODE;

  /**
   * The deepest page of the message list: it reads up to limit + offset partitions and segments.
   */
  private static final int MAX_LIST_OFFSET = 100_000;

  private final MessageStore messages;
  private final MessageRemoval removal;
  private final TraceStore traces;
  private final InstantSource clock;
  private final Payloads payloads;

  public MessageRoutes(
      MessageStore messages,
      MessageRemoval removal,
      TraceStore traces,
      InstantSource clock,
      Payloads payloads) {
    this.removal = removal;
    this.payloads = payloads;
    this.messages = messages;
    this.traces = traces;
    this.clock = clock;
  }

  @Override
  public void declare(RouteTable rules) {
    rules.get("/api/v1/messages", Access.READ_ONLY, this::list);
    rules.get("/api/v1/messages/{partitionId}/{transactionId}", Access.READ_ONLY, this::detail);
    rules.delete("/api/v1/messages/{partitionId}/{transactionId}", Access.READ_WRITE, this::delete);
    rules.post(
        "/api/v1/messages/{partitionId}/{transactionId}/dlq",
        Access.READ_WRITE,
        this::moveToDeadLetters);
  }

  private void moveToDeadLetters(Request req, Response res) {
    Params p = new Params(req);
    UUID partitionId = Fields.uuid(p.path("partitionId"), "partitionId");
    String transactionId = p.path("transactionId");
    List<String> groups =
        removal
            .moveToDeadLetters(partitionId, transactionId)
            .orElseThrow(() -> ApiException.notFound("Message not found"));
    ObjectNode body =
        Json.object()
            .put("success", true)
            .put("partitionId", partitionId.toString())
            .put("transactionId", transactionId)
            .put("message", "Message moved to dead letter queue");
    groups.forEach(body.putArray("consumerGroups")::add);
    Replies.json(res, 200, body);
  }

  private void delete(Request req, Response res) {
    Params p = new Params(req);
    UUID partitionId = Fields.uuid(p.path("partitionId"), "partitionId");
    String transactionId = p.path("transactionId");
    if (!removal.delete(partitionId, transactionId)) {
      throw ApiException.notFound("Message not found");
    }
    Replies.json(
        res,
        200,
        Json.object()
            .put("success", true)
            .put("partitionId", partitionId.toString())
            .put("transactionId", transactionId)
            .put("message", "Message deleted successfully"));
  }

  private void list(Request req, Response res) {
    Params p = new Params(req);
    String status = p.optional("status");
    if (FAILED.equals(status)) {
      status = "dead_letter";
    }
    if (status != null && !STATUSES.contains(status)) {
      throw ApiException.badRequest(
          "status must be one of pending, processing, completed, dead_letter (or failed)");
    }
    Instant now = clock.instant();
    Instant from = p.timestamp("from");
    Instant to = p.timestamp("to");
    TimeWindow.ordered(from, to);
    if (from == null) {
      // the hour before to: a past to alone was an empty page, its hour before now
      from = (to == null ? now : to).minus(Duration.ofHours(1));
    }
    if (to == null) {
      to = now.truncatedTo(ChronoUnit.MINUTES).plus(Duration.ofMinutes(1));
    }
    int limit = p.limit(200, 1000);
    int offset = p.offset(MAX_LIST_OFFSET);
    MessageStore.Filter filter =
        new MessageStore.Filter(
            p.optional("queue"),
            p.optional("partition"),
            p.optional("ns"),
            p.optional("task"),
            status,
            from,
            to);
    List<MessageStore.Listed> page = messages.list(filter, limit, offset);
    ObjectNode body = Json.object();
    ArrayNode list = body.putArray("messages");
    boolean queueMode = false;
    int busGroups = 0;
    for (MessageStore.Listed m : page) {
      if (m.frame() != null && m.frame().isDeleted()) {
        continue;
      }
      queueMode |= m.queueStatus() != null;
      busGroups = Math.max(busGroups, m.totalGroups());
      ObjectNode n = list.addObject();
      Frame f = m.frame();
      n.put("id", m.messageId().toString());
      n.put("transactionId", f == null ? null : f.transactionId());
      n.put("partitionId", m.partitionId().toString());
      n.put("queuePath", m.queue() + "/" + m.partition());
      n.put("queue", m.queue());
      n.put("partition", m.partition());
      n.put("namespace", m.namespace());
      n.put("task", m.task());
      n.put("status", m.status());
      n.put("queueStatus", m.queueStatus());
      n.putObject("busStatus")
          .put("consumedBy", m.consumedBy())
          .put("totalGroups", m.totalGroups());
      n.put("traceId", f == null || f.traceId() == null ? null : f.traceId().toString());
      n.put("producerSub", f == null ? null : f.producerSub());
      n.put("queuePriority", m.priority());
      n.put("createdAt", Json.millis(m.createdAt()));
      n.put("leaseExpiresAt", Json.millisOrNull(m.leaseExpiresAt()));
      n.put("offset", m.offset());
    }
    mode(body.putObject("mode"), queueMode, busGroups);
    // the rows of the log this page read, deleted messages included: the next page starts that
    // far on, and there may be more while it is the limit (a page short of a deleted message
    // looked like the last)
    body.put("rows", page.size());
    Replies.json(res, 200, body);
  }

  private void detail(Request req, Response res) {
    Params p = new Params(req);
    UUID partitionId = Fields.uuid(p.path("partitionId"), "partitionId");
    String transactionId = p.path("transactionId");
    MessageStore.Stored m =
        messages
            .find(partitionId, transactionId)
            .orElseThrow(() -> ApiException.notFound("Message not found"));
    List<MessageStore.GroupStatus> groups = messages.groups(partitionId, m.offset());
    MessageStore.GroupStatus queueMode =
        groups.stream().filter(g -> g.group().equals(QUEUE_MODE)).findFirst().orElse(null);
    Set<String> consumedBy = new HashSet<>();
    int busGroups = 0;
    String error = null;
    int retries = 0;
    Instant leaseExpiresAt = null;
    for (MessageStore.GroupStatus g : groups) {
      if (!g.group().equals(QUEUE_MODE)) {
        busGroups++;
        if (g.consumed()) {
          consumedBy.add(g.group());
        }
      }
      if (g.errorMessage() != null && error == null) {
        error = g.errorMessage();
      }
      retries = Math.max(retries, g.retryCount());
      if (g.leaseExpiresAt() != null && leaseExpiresAt == null) {
        leaseExpiresAt = g.leaseExpiresAt();
      }
    }
    Frame f = m.frame();
    ObjectNode n = Json.object();
    n.put("id", m.messageId().toString());
    n.put("transactionId", f.transactionId());
    n.put("partitionId", partitionId.toString());
    n.put("queuePath", m.queue() + "/" + m.partition());
    n.put("queue", m.queue());
    n.put("partition", m.partition());
    n.put("namespace", m.queueInfo().namespace());
    n.put("task", m.queueInfo().task());
    n.put("offset", m.offset());
    n.put("status", status(queueMode, consumedBy.size(), busGroups));
    Json.putPayload(n, "payload", payloads.plain(f));
    n.put("isEncrypted", (f.flags() & Frame.FLAG_ENCRYPTED) != 0);
    n.put("traceId", f.traceId() == null ? null : f.traceId().toString());
    n.put("producerSub", f.producerSub());
    n.put("createdAt", Json.millis(m.createdAt()));
    n.put("errorMessage", error);
    n.put("retryCount", retries);
    n.put("leaseExpiresAt", Json.millisOrNull(leaseExpiresAt));
    n.putObject("queueConfig")
        .put("leaseTime", m.queueInfo().leaseTime())
        .put("retryLimit", m.queueInfo().retryLimit())
        .put("retryDelay", m.queueInfo().retryDelay())
        .put("ttl", m.queueInfo().ttl())
        .put("priority", m.queueInfo().priority());
    ObjectNode mode = n.putObject("mode");
    mode(mode, queueMode != null, busGroups);
    mode.put("consumedByGroups", consumedBy.size());
    ArrayNode perGroup = n.putArray("consumerGroups");
    for (MessageStore.GroupStatus g : groups) {
      perGroup
          .addObject()
          .put("name", g.group())
          .put("consumed", g.consumed())
          .put("status", groupStatus(g))
          .put("leaseExpiresAt", Json.millisOrNull(g.leaseExpiresAt()));
    }
    ArrayNode traceList = n.putArray("traces");
    for (TraceStore.Trace t : traces.of(partitionId, m.offset())) {
      TraceRoutes.render(traceList.addObject(), t);
    }
    Replies.json(res, 200, n);
  }

  private static String status(MessageStore.GroupStatus queueMode, int consumed, int busGroups) {
    if (queueMode != null) {
      return groupStatus(queueMode);
    }
    return busGroups > 0 && consumed == busGroups ? "completed" : "pending";
  }

  private static String groupStatus(MessageStore.GroupStatus g) {
    if (g.deadLettered()) {
      return "dead_letter";
    }
    if (g.consumed()) {
      return "completed";
    }
    return g.leased() ? "processing" : "pending";
  }

  private static void mode(ObjectNode mode, boolean queueMode, int busGroups) {
    mode.put("hasQueueMode", queueMode);
    mode.put("busGroupsCount", busGroups);
    mode.put(
        "type",
        queueMode && busGroups > 0
            ? "hybrid"
            : queueMode ? "queue" : busGroups > 0 ? "bus" : "none");
  }
}
