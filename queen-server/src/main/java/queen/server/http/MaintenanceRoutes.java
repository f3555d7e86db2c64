package queen.server.http;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import queen.server.http.auth.Access;
import queen.server.pop.PopSettings;
import queen.server.push.BufferedPush;
import queen.server.store.SystemStore;

/**
 * The maintenance switches of WIRE.md section 16. Push maintenance ({@code
 * /api/v1/system/maintenance}): while on, every broker writes pushes to its local buffer and
 * answers {@code buffered}; switched off, the buffers drain. Pop maintenance ({@code .../pop}):
 * while on, every pop of every broker answers 204 at once with no work done. The switches live in
 * the database (other brokers follow within QUEEN_STATE_REFRESH_MS); the GETs read them fresh.
 */
public final class MaintenanceRoutes implements Routes {
  private final SystemStore system;
  private final PopSettings settings;
  private final BufferedPush pushes;
  private final Runnable changed;

  /**
   * {@code changed} runs after a switch was set: this broker reads the switches again, after any
   * refresh that read them before (which set the switch back until the next refresh, so a push
   * answered after push maintenance went straight to the database), and other brokers follow.
   */
  public MaintenanceRoutes(
      SystemStore system, PopSettings settings, BufferedPush pushes, Runnable changed) {
    this.system = system;
    this.settings = settings;
    this.pushes = pushes;
    this.changed = changed;
  }

  @Override
  public void declare(RouteTable rules) {
    rules.get(
        "/api/v1/system/maintenance",
        Access.ADMIN,
        (req, res) -> {
          SystemStore.State s = system.switches();
          BufferedPush.Status b = pushes.status();
          long[] failed = pushes.quarantined();
          ObjectNode body =
              Json.object()
                  .put("maintenanceMode", s.pushMaintenance())
                  .put("popMaintenanceMode", s.popMaintenance())
                  .put("bufferedMessages", b.pending())
                  .put("bufferHealthy", b.healthy());
          body.putObject("bufferStats")
              .put("pendingCount", b.pending())
              .put("failedCount", b.failed())
              .put("dbHealthy", b.dbHealthy())
              .putObject("failedFiles")
              .put("count", failed[0])
              .put("totalBytes", failed[1])
              .put("totalMB", failed[1] / 1_048_576.0)
              .put("failoverCount", 0)
              .put("qos0Count", 0);
          Replies.json(res, 200, body);
        });
    rules.post(
        "/api/v1/system/maintenance",
        Access.ADMIN,
        (req, res) -> {
          boolean on = system.setPushMaintenance(enabled(req));
          pushes.maintenance(on);
          changed.run();
          Replies.json(
              res,
              200,
              Json.object()
                  .put("maintenanceMode", on)
                  .put("bufferedMessages", pushes.status().pending())
                  .put("bufferHealthy", pushes.status().healthy())
                  .put(
                      "message",
                      on
                          ? "Maintenance mode is on: pushes go to the brokers' local buffers"
                          : "Maintenance mode is off: the local buffers drain into the database"));
        });
    rules.get(
        "/api/v1/system/maintenance/pop",
        Access.ADMIN,
        (req, res) -> reply(res, system.switches().popMaintenance()));
    rules.post(
        "/api/v1/system/maintenance/pop",
        Access.ADMIN,
        (req, res) -> {
          boolean on = system.setPopMaintenance(enabled(req));
          settings.setPopMaintenance(on);
          changed.run();
          reply(res, on);
        });
  }

  private static boolean enabled(Request req) {
    JsonNode enabled = Json.objectBody(req).get("enabled");
    if (enabled == null || !enabled.isBoolean()) {
      throw ApiException.badRequest("enabled (boolean) is required");
    }
    return enabled.booleanValue();
  }

  private static void reply(Response res, boolean on) {
    Replies.json(
        res,
        200,
        Json.object()
            .put("popMaintenanceMode", on)
            .put(
                "message",
                on
                    ? "Pop maintenance mode is on: every pop answers 204"
                    : "Pop maintenance mode is off"));
  }
}
