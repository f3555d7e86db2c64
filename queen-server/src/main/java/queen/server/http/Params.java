package queen.server.http;

import io.helidon.webserver.http.ServerRequest;
import java.time.Instant;

/**
 * Query parameters read the way Queen reads them: booleans are true only for {@code true} or {@code
 * 1}, integers that fail to parse take the default, values arrive URL-decoded.
 */
final class Params {
  private final ServerRequest req;

  Params(ServerRequest req) {
    this.req = req;
  }

  String string(String name, String fallback) {
    return Fields.text(req.query().first(name).orElse(fallback), name);
  }

  /** A parameter that filters when present: null when absent or blank. */
  String optional(String name) {
    String v = string(name, "");
    return v.isBlank() ? null : v;
  }

  /** A timestamp parameter (see {@link Fields#timestamp}): null when absent or blank. */
  Instant timestamp(String name) {
    String v = optional(name);
    return v == null ? null : Fields.timestamp(name, v);
  }

  boolean bool(String name, boolean fallback) {
    return req.query().first(name).map(v -> v.equals("true") || v.equals("1")).orElse(fallback);
  }

  int integer(String name, int fallback) {
    String v = req.query().first(name).orElse(null);
    if (v == null) {
      return fallback;
    }
    try {
      return Integer.parseInt(v.trim());
    } catch (NumberFormatException e) {
      return fallback;
    }
  }

  /** A path parameter, percent-decoded once. */
  String path(String name) {
    return Fields.text(req.path().pathParameters().get(name), name);
  }
}
