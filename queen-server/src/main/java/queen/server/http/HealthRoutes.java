package queen.server.http;

import com.fasterxml.jackson.databind.node.ObjectNode;
import queen.server.http.auth.Access;
import queen.server.store.Database;

/** {@code GET /health}: 200 when PostgreSQL answers, else 503. */
public final class HealthRoutes implements Routes {
  private final Database db;
  private final String version;

  public HealthRoutes(Database db, String version) {
    this.db = db;
    this.version = version;
  }

  @Override
  public void declare(RouteTable rules) {
    rules.get(
        "/health",
        Access.PUBLIC,
        (req, res) -> {
          boolean up = db.ping();
          ObjectNode body = Json.object();
          body.put("status", up ? "healthy" : "unhealthy");
          body.put("database", up ? "connected" : "disconnected");
          body.put("server", "Queen JVM");
          body.put("worker_id", 0);
          body.put("version", version);
          body.putObject("shared_state").put("enabled", false).put("running", false);
          body.putObject("queen").put("worker_id", 0).put("status", "active");
          Replies.json(res, up ? 200 : 503, body);
        });
  }
}
