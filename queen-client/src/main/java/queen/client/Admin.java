package queen.client;

import com.fasterxml.jackson.databind.JsonNode;
import java.time.Instant;
import java.util.Map;

/**
 * The broker's operator routes, answering the broker's JSON as it is.
 *
 * <pre>{@code
 * JsonNode queues = queen.admin().queues();
 * queen.admin().popMaintenance(true);   // every pop answers empty until switched off
 * }</pre>
 */
public final class Admin {
  private static final String GROUPS = "/api/v1/consumer-groups/";

  private final Queen queen;

  Admin(Queen queen) {
    this.queen = queen;
  }

  /** {@code GET /health}: {@code {"status":"healthy", ...}}; a 503 when the database is down. */
  public JsonNode health() {
    return get("/health", Map.of());
  }

  /** {@code GET /api/v1/resources/queues}: every queue with partition and message counts. */
  public JsonNode queues() {
    return get("/api/v1/resources/queues", Map.of());
  }

  /** {@code GET /api/v1/consumer-groups}: one entry per consumer group and queue, with lag. */
  public JsonNode consumerGroups() {
    return get("/api/v1/consumer-groups", Map.of());
  }

  /**
   * {@code GET /api/v1/consumer-groups/:group}: the group's cursors keyed by queue name (the first
   * 1,000), each partition with its lag and lease; a {@link QueenException} with status 404 for an
   * unknown group.
   */
  public JsonNode consumerGroup(String group) {
    return get(GROUPS + Transport.segment(group), Map.of());
  }

  /**
   * One page of the group's cursors: query {@code queue} (one queue's only), {@code limit} (the
   * broker's default 1,000, at most 10,000) and {@code offset}, ordered by queue and partition.
   */
  public JsonNode consumerGroup(String group, Map<String, String> query) {
    return get(GROUPS + Transport.segment(group), query);
  }

  /** {@code GET /api/v1/consumer-groups/lagging}: cursors at least {@code minLagSeconds} behind. */
  public JsonNode laggingConsumerGroups(int minLagSeconds) {
    return get(GROUPS + "lagging", Map.of("minLagSeconds", Integer.toString(minLagSeconds)));
  }

  /**
   * Deletes the group's cursors on every queue, so that its next consume starts over from its
   * subscription; with {@code deleteMetadata} the subscription record goes too.
   */
  public JsonNode deleteConsumerGroup(String group, boolean deleteMetadata) {
    return delete(GROUPS + Transport.segment(group), deleteMetadata);
  }

  /** As {@link #deleteConsumerGroup(String, boolean)}, on one queue. */
  public JsonNode deleteConsumerGroup(String group, String queue, boolean deleteMetadata) {
    return delete(
        GROUPS + Transport.segment(group) + "/queues/" + Transport.segment(queue), deleteMetadata);
  }

  /** Sets where cursors the group creates from now on start; existing cursors stay. */
  public JsonNode updateSubscription(String group, Instant from) {
    return post(
        GROUPS + Transport.segment(group) + "/subscription",
        Map.of("subscriptionTimestamp", from.toString()),
        group);
  }

  /** Moves the group's cursors on the queue to the newest message: the backlog is skipped. */
  public JsonNode seekToEnd(String group, String queue) {
    return post(seekPath(group, queue), Map.of("toEnd", true), group);
  }

  /**
   * Moves the group's cursors on the queue so that messages created at or after {@code at} come
   * again.
   */
  public JsonNode seek(String group, String queue, Instant at) {
    return post(seekPath(group, queue), Map.of("timestamp", at.toString()), group);
  }

  /** Moves the group's cursor on one partition to its newest message. */
  public JsonNode seekPartitionToEnd(String group, String queue, String partition) {
    return post(
        GROUPS
            + Transport.segment(group)
            + "/queues/"
            + Transport.segment(queue)
            + "/partitions/"
            + Transport.segment(partition)
            + "/seek",
        Map.of(),
        group);
  }

  /**
   * {@code GET /api/v1/messages}: newest first, without payloads. {@code filters} are the route's
   * query parameters ({@code queue}, {@code partition}, {@code ns}, {@code task}, {@code status},
   * {@code from}, {@code to}, {@code limit}, {@code offset}).
   */
  public JsonNode messages(Map<String, String> filters) {
    return get("/api/v1/messages", filters);
  }

  /** One message with its payload, its status per group and its traces; 404 when unknown. */
  public JsonNode message(String partitionId, String transactionId) {
    return get(messagePath(partitionId, transactionId), Map.of());
  }

  /** Deletes one message: no group receives it again; the others keep their offsets. */
  public JsonNode deleteMessage(String partitionId, String transactionId) {
    return queen
        .transport
        .send(Transport.Call.delete(messagePath(partitionId, transactionId), Map.of(), partitionId))
        .body();
  }

  /**
   * Moves one message to the dead letters of every group that has not consumed it yet; it leaves
   * the log, and a requeue brings it back as a new message.
   */
  public JsonNode moveToDeadLetters(String partitionId, String transactionId) {
    return post(messagePath(partitionId, transactionId) + "/dlq", Map.of(), partitionId);
  }

  /** {@code GET /api/v1/traces/:partitionId/:transactionId}: one message's traces. */
  public JsonNode traces(String partitionId, String transactionId) {
    return get(
        "/api/v1/traces/" + Transport.segment(partitionId) + "/" + Transport.segment(transactionId),
        Map.of());
  }

  /** {@code GET /api/v1/traces/by-name/:name}: the newest traces carrying a name. */
  public JsonNode tracesByName(String name, int limit, int offset) {
    return get(
        "/api/v1/traces/by-name/" + Transport.segment(name),
        Map.of("limit", Integer.toString(limit), "offset", Integer.toString(offset)));
  }

  /** {@code GET /api/v1/traces/names}: the 50 trace names used last. */
  public JsonNode traceNames() {
    return get("/api/v1/traces/names", Map.of());
  }

  /** {@code GET /api/v1/traces/names}: a page of the trace names in use, last used first. */
  public JsonNode traceNames(int limit, int offset) {
    return get(
        "/api/v1/traces/names",
        Map.of("limit", Integer.toString(limit), "offset", Integer.toString(offset)));
  }

  /** {@code GET /api/v1/status}: throughput, counts, leases and dead letters of the last hour. */
  public JsonNode status() {
    return get("/api/v1/status", Map.of());
  }

  /**
   * {@code GET /api/v1/status/analytics}: per-bucket counts ({@code minute}, {@code hour}, {@code
   * day}).
   */
  public JsonNode analytics(String interval) {
    return analytics(Map.of("interval", interval));
  }

  /**
   * {@code GET /api/v1/status/analytics} with any of its query parameters: {@code interval}, {@code
   * from}, {@code to}, {@code queue}, {@code namespace}, {@code task}.
   */
  public JsonNode analytics(Map<String, String> query) {
    return get("/api/v1/status/analytics", query);
  }

  /**
   * {@code GET /api/v1/analytics/<series>}: {@code queue-ops}, {@code queue-lag}, {@code
   * retention}, {@code queue-parked-replicas}, {@code system-metrics}, {@code worker-metrics}
   * (per-minute series; query {@code from}, {@code to}, {@code queue}, {@code hostname}, {@code
   * workerId}) or {@code postgres-stats}.
   */
  public JsonNode analyticsSeries(String series, Map<String, String> query) {
    return get("/api/v1/analytics/" + Transport.segment(series), query);
  }

  private static String messagePath(String partitionId, String transactionId) {
    return "/api/v1/messages/"
        + Transport.segment(partitionId)
        + "/"
        + Transport.segment(transactionId);
  }

  private static String seekPath(String group, String queue) {
    return GROUPS + Transport.segment(group) + "/queues/" + Transport.segment(queue) + "/seek";
  }

  /** {@code GET /api/v1/system/maintenance/pop}: whether pops are paused. */
  public boolean popMaintenance() {
    return get("/api/v1/system/maintenance/pop", Map.of()).path("popMaintenanceMode").asBoolean();
  }

  /** Pauses ({@code true}) or resumes every pop on every broker of the database. */
  public boolean popMaintenance(boolean enabled) {
    return queen
        .transport
        .send(Transport.Call.post("/api/v1/system/maintenance/pop", Map.of("enabled", enabled), ""))
        .body()
        .path("popMaintenanceMode")
        .asBoolean();
  }

  /**
   * Puts a dead letter back on its partition as a new message (transaction id {@code
   * <original>:requeued:<message id>}), answering the broker's result.
   */
  public JsonNode retryDeadLetter(String partitionId, String transactionId) {
    return queen
        .transport
        .send(
            Transport.Call.post(
                "/api/v1/messages/"
                    + Transport.segment(partitionId)
                    + "/"
                    + Transport.segment(transactionId)
                    + "/retry",
                Map.of(),
                partitionId))
        .body();
  }

  private JsonNode get(String path, Map<String, String> query) {
    return queen.transport.send(Transport.Call.get(path, query, "")).body();
  }

  private JsonNode post(String path, Object body, String key) {
    return queen.transport.send(Transport.Call.post(path, body, key)).body();
  }

  private JsonNode delete(String path, boolean deleteMetadata) {
    return queen
        .transport
        .send(
            Transport.Call.delete(
                path, Map.of("deleteMetadata", Boolean.toString(deleteMetadata)), ""))
        .body();
  }
}
