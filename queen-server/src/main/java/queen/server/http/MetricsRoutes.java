package queen.server.http;

import io.helidon.http.HeaderNames;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import java.nio.charset.StandardCharsets;
import queen.server.http.auth.Access;

/** {@code GET /metrics/prometheus}: the broker's meters in the Prometheus text format. */
public final class MetricsRoutes implements Routes {
  private final PrometheusMeterRegistry registry;

  public MetricsRoutes(PrometheusMeterRegistry registry) {
    this.registry = registry;
  }

  @Override
  public void declare(RouteTable rules) {
    rules.get(
        "/metrics/prometheus",
        Access.PUBLIC,
        (req, res) -> {
          res.header(HeaderNames.CONTENT_TYPE, "text/plain; version=0.0.4; charset=utf-8");
          res.send(registry.scrape().getBytes(StandardCharsets.UTF_8));
        });
  }
}
