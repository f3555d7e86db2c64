package queen.server.http.auth;

import java.net.URI;
import java.time.Duration;
import java.util.List;

/**
 * JWT authentication as configured by Queen's variables (WIRE.md section 0). Off unless {@code
 * enabled}; when on, at least one key source is set: a shared secret for HS256, a PEM public key
 * (RSA or Ed25519), or a JWKS URL.
 *
 * @param enabled JWT_ENABLED
 * @param algorithm JWT_ALGORITHM: one accepted algorithm (HS256, RS256, EdDSA, ...) or null for
 *     every algorithm the configured keys can verify
 * @param secret JWT_SECRET, at least 32 bytes (HS256 requires a 256-bit key), or null
 * @param publicKeyPem JWT_PUBLIC_KEY, a PEM {@code PUBLIC KEY}, or null
 * @param jwksUrl JWT_JWKS_URL, or null
 * @param jwksRefresh JWT_JWKS_REFRESH_INTERVAL (seconds): how long fetched keys are used before the
 *     set is fetched again; an unknown {@code kid} fetches it at once (rate-limited)
 * @param jwksTimeout JWT_JWKS_TIMEOUT_MS: connect and read timeout of a JWKS fetch
 * @param issuer JWT_ISSUER, the required {@code iss}, or null
 * @param audience JWT_AUDIENCE, a required {@code aud} member, or null
 * @param clockSkew JWT_CLOCK_SKEW (seconds) allowed on {@code exp} and {@code nbf}
 * @param skipPaths JWT_SKIP_PATHS: paths served without a token (exact, or a prefix ending in
 *     {@code /*})
 * @param roleClaim JWT_ROLES_CLAIM, the claim holding one role
 * @param rolesClaim JWT_ROLES_ARRAY_CLAIM, the claim holding an array of roles
 * @param adminRole JWT_ROLE_ADMIN
 * @param readWriteRole JWT_ROLE_READ_WRITE
 * @param readOnlyRole JWT_ROLE_READ_ONLY
 */
public record AuthSettings(
    boolean enabled,
    String algorithm,
    String secret,
    String publicKeyPem,
    URI jwksUrl,
    Duration jwksRefresh,
    Duration jwksTimeout,
    String issuer,
    String audience,
    Duration clockSkew,
    List<String> skipPaths,
    String roleClaim,
    String rolesClaim,
    String adminRole,
    String readWriteRole,
    String readOnlyRole) {

  public static final List<String> DEFAULT_SKIP_PATHS =
      List.of("/health", "/metrics/prometheus", "/metrics", "/");

  /** Authentication off: every route open, as old Queen by default. */
  public static AuthSettings disabled() {
    return new AuthSettings(
        false,
        null,
        null,
        null,
        null,
        Duration.ofHours(1),
        Duration.ofSeconds(5),
        null,
        null,
        Duration.ofSeconds(30),
        DEFAULT_SKIP_PATHS,
        "role",
        "roles",
        "admin",
        "read-write",
        "read-only");
  }

  /**
   * Refuses a skip path that does not start with '/': it matched nothing, silently, where the
   * operator meant a path of the broker.
   *
   * @throws IllegalArgumentException naming it
   */
  public void checkSkipPaths() {
    for (String path : skipPaths) {
      if (!path.startsWith("/")) {
        throw new IllegalArgumentException(
            "JWT_SKIP_PATHS: \"" + path + "\" is not a path (it must start with '/')");
      }
    }
  }

  /**
   * Whether a request to the path of these segments, each percent-decoded (one may hold a '/'), is
   * served without a token. Matched segment by segment: an exact skip path
   * /api/v1/consumer-groups/g/queues/q must not open the delete of the group named "g/queues/q",
   * whose decoded path is the same text.
   */
  public boolean skips(List<String> segments) {
    for (String p : skipPaths) {
      List<String> skip = skipSegments(p);
      if (p.endsWith("/*")
          ? (segments.size() > skip.size() || skip.isEmpty())
              && segments.subList(0, skip.size()).equals(skip)
          : segments.equals(skip)) {
        return true;
      }
    }
    return false;
  }

  /**
   * Whether some request to a route of this pattern is served without a token: its {@code {name}}
   * segments match any skip path's segment there but an empty one, its last {@code *} any rest. An
   * exact skip path meant for a listing, /api/v1/resources/queues/orders, also opens the queue's
   * delete.
   */
  public boolean skipsSome(String pattern) {
    boolean rest = pattern.endsWith("/*");
    List<String> route = segments(rest ? pattern.substring(0, pattern.length() - 2) : pattern);
    for (String p : skipPaths) {
      List<String> skip = skipSegments(p);
      boolean agree = true;
      for (int i = 0; i < Math.min(route.size(), skip.size()) && agree; i++) {
        String r = route.get(i);
        agree = r.startsWith("{") ? !skip.get(i).isEmpty() : r.equals(skip.get(i));
      }
      boolean longer = route.size() > skip.size();
      if (agree
          && (p.endsWith("/*")
              ? longer || rest || skip.isEmpty()
              : rest ? skip.size() > route.size() : route.size() == skip.size())) {
        return true;
      }
    }
    return false;
  }

  /**
   * A skip path's segments: an exact one's as {@link #segments}; a prefix's those of the text
   * before its "/*", a request's first ones ("/*" as [], which opens every path, "/" too; "//*" as
   * [""], which opens those whose first segment is empty, as a prefix "//" of the text did).
   */
  private static List<String> skipSegments(String skipPath) {
    if (!skipPath.endsWith("/*")) {
      return segments(skipPath);
    }
    String prefix = skipPath.substring(0, skipPath.length() - 2);
    return prefix.isEmpty() ? List.of() : List.of(prefix.substring(1).split("/", -1));
  }

  /** "/a/b" as [a, b], "/" as []; an empty segment is kept. */
  private static List<String> segments(String path) {
    String p = path.startsWith("/") ? path.substring(1) : path;
    return p.isEmpty() ? List.of() : List.of(p.split("/", -1));
  }
}
