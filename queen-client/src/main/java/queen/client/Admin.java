package queen.client;

import com.fasterxml.jackson.databind.JsonNode;
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
}
