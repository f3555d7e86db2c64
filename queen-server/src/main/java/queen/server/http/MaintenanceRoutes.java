package queen.server.http;

import com.fasterxml.jackson.databind.JsonNode;
import queen.server.http.auth.Access;
import queen.server.pop.PopSettings;
import queen.server.store.SystemStore;

/**
 * {@code /api/v1/system/maintenance/pop}: while on, every pop of every broker answers 204 at once
 * with no work done. The switch lives in the database; the GET reads it fresh.
 */
public final class MaintenanceRoutes implements Routes {
  private final SystemStore system;
  private final PopSettings settings;

  public MaintenanceRoutes(SystemStore system, PopSettings settings) {
    this.system = system;
    this.settings = settings;
  }

  @Override
  public void declare(RouteTable rules) {
    rules.get(
        "/api/v1/system/maintenance/pop",
        Access.ADMIN,
        (req, res) -> reply(res, system.switches().popMaintenance()));
    rules.post(
        "/api/v1/system/maintenance/pop",
        Access.ADMIN,
        (req, res) -> {
          JsonNode enabled = Json.objectBody(req).get("enabled");
          if (enabled == null || !enabled.isBoolean()) {
            throw ApiException.badRequest("enabled (boolean) is required");
          }
          boolean on = system.setPopMaintenance(enabled.booleanValue());
          settings.setPopMaintenance(on);
          reply(res, on);
        });
  }

  private static void reply(io.helidon.webserver.http.ServerResponse res, boolean on) {
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
