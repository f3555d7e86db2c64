package queen.server.http;

import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import java.lang.management.ManagementFactory;
import java.lang.management.MemoryUsage;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.time.InstantSource;
import queen.server.http.auth.Access;
import queen.server.ops.BrokerSampler;
import queen.server.store.Database;

/**
 * {@code GET /metrics/prometheus}: the broker's meters in the Prometheus text format; and {@code
 * GET /metrics}, Queen's legacy JSON (WIRE.md section 2), where uptime, the pool and memory carry
 * real values and the rest stays at 0 as in old Queen (the Prometheus families count them).
 */
public final class MetricsRoutes implements Routes {
  private final PrometheusMeterRegistry registry;
  private final Database db;
  private final int poolSize;
  private final InstantSource clock;
  private final Instant started;

  public MetricsRoutes(
      PrometheusMeterRegistry registry, Database db, int poolSize, InstantSource clock) {
    this.registry = registry;
    this.db = db;
    this.poolSize = poolSize;
    this.clock = clock;
    this.started = clock.instant();
  }

  @Override
  public void declare(RouteTable rules) {
    rules.get(
        "/metrics/prometheus",
        Access.PUBLIC,
        (req, res) -> {
          res.header("Content-Type", "text/plain; version=0.0.4; charset=utf-8");
          res.send(registry.scrape().getBytes(StandardCharsets.UTF_8));
        });
    rules.get("/metrics", Access.PUBLIC, (req, res) -> Replies.json(res, 200, legacy()));
  }

  private com.fasterxml.jackson.databind.node.ObjectNode legacy() {
    var body = Json.object();
    body.put("uptime", Duration.between(started, clock.instant()).toSeconds());
    body.putObject("requests").put("total", 0).put("rate", 0);
    body.putObject("messages").put("total", 0).put("rate", 0);
    Database.PoolState pool = db.poolState();
    body.putObject("database")
        .put("poolSize", poolSize)
        .put("idleConnections", pool.idle())
        .put("waitingRequests", pool.waiting());
    MemoryUsage heap = ManagementFactory.getMemoryMXBean().getHeapMemoryUsage();
    MemoryUsage other = ManagementFactory.getMemoryMXBean().getNonHeapMemoryUsage();
    body.putObject("memory")
        .put("rss", BrokerSampler.rss())
        .put("heapTotal", heap.getCommitted())
        .put("heapUsed", heap.getUsed())
        .put("external", other.getUsed())
        .put("arrayBuffers", 0);
    body.putObject("cpu").put("user", 0).put("system", 0);
    return body;
  }
}
