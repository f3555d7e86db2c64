package queen.cli;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import picocli.CommandLine.Option;
import queen.client.Queen;

/** How the client subcommands reach the broker. */
final class ClientOptions {
  @Option(
      names = "--url",
      defaultValue = "${env:QUEEN_URL:-http://localhost:6632}",
      description = "broker URL; several, comma-separated, fail over (default ${DEFAULT-VALUE})",
      split = ",")
  String[] urls;

  @Option(
      names = "--token",
      defaultValue = "${env:QUEEN_TOKEN}",
      description = "bearer token sent with every request (default: $QUEEN_TOKEN)")
  String token;

  @Option(
      names = "--request-timeout",
      defaultValue = "30",
      paramLabel = "SECONDS",
      description = "time limit of one request (default ${DEFAULT-VALUE})")
  int timeoutSeconds;

  Queen connect() {
    if (timeoutSeconds < 1) {
      throw new IllegalArgumentException(
          "--request-timeout must be at least 1 second, got " + timeoutSeconds);
    }
    Queen.Builder b =
        Queen.builder().urls(List.of(urls)).timeout(Duration.ofSeconds(timeoutSeconds));
    if (token != null && !token.isBlank()) {
      b.bearerToken(token);
    }
    return b.build();
  }

  /** Adds a query parameter the user gave; one left out keeps the broker's default. */
  static void putIfSet(Map<String, String> query, String key, String value) {
    if (value != null) {
      query.put(key, value);
    }
  }
}
