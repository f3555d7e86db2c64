package queen.server.http;

import java.util.List;
import java.util.Objects;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import queen.server.http.auth.Access;
import queen.server.http.auth.AuthFailure;
import queen.server.http.auth.AuthSettings;
import queen.server.http.auth.Caller;
import queen.server.http.auth.TokenVerifier;

/**
 * Admits a request to a route when authentication is off, when the route is public or its path is
 * in JWT_SKIP_PATHS, or when its bearer token verifies and grants the route's access; otherwise 401
 * (no token, or one not accepted) or 403 (a valid token whose roles are below the route's). The
 * admitted caller is kept in the request's context for the routes that stamp it on messages.
 */
public final class Gate {
  private static final String BEARER = "bearer ";

  private static final Logger log = LoggerFactory.getLogger(Gate.class);

  private final AuthSettings settings;
  private final TokenVerifier verifier;

  private Gate(AuthSettings settings, TokenVerifier verifier) {
    this.settings = settings;
    this.verifier = verifier;
  }

  /** The gate for the settings; {@link TokenVerifier#create} says what is wrong with them. */
  public static Gate of(AuthSettings settings) {
    if (!settings.enabled()
        && (settings.secret() != null
            || settings.publicKeyPem() != null
            || settings.jwksUrl() != null)) {
      // a misspelt JWT_ENABLED left a broker configured for tokens open to anyone
      log.warn(
          "JWT_SECRET, JWT_PUBLIC_KEY or JWT_JWKS_URL is set but JWT_ENABLED is not true:"
              + " authentication is off and every route is open");
    }
    if (settings.enabled()
        && settings.jwksUrl() != null
        && (settings.issuer() == null || settings.audience() == null)) {
      // a provider's keys often sign tokens for many tenants and applications
      log.warn(
          "JWT_JWKS_URL without JWT_ISSUER and JWT_AUDIENCE: any token its keys signed is"
              + " accepted, whoever it was issued for");
    }
    return new Gate(settings, settings.enabled() ? TokenVerifier.create(settings) : null);
  }

  void admit(Request req, Access required) {
    if (verifier == null) {
      req.admitted(Caller.OPEN);
      return;
    }
    if (required == Access.PUBLIC || settings.skips(req.segments())) {
      return;
    }
    String header = Objects.requireNonNullElse(req.header("Authorization"), "").trim();
    String token =
        header.regionMatches(true, 0, BEARER, 0, BEARER.length())
            ? header.substring(BEARER.length()).trim()
            // "Bearer" alone, trimmed of its space, is no token; not a token named "Bearer"
            : header.equalsIgnoreCase(BEARER.trim())
                ? ""
                : header; // a bare token without the prefix is accepted too (WIRE.md section 0)
    if (token.isEmpty()) {
      throw new AuthFailure("Authentication required");
    }
    Caller caller = verifier.verify(token);
    if (!caller.access().grants(required)) {
      throw new ApiException(403, "Insufficient permissions");
    }
    req.admitted(caller);
  }

  /**
   * The routes that need a token to write or administer but that JWT_SKIP_PATHS serves without one,
   * as {@code METHOD path}: a skip path applies to every method of what it matches, so {@code
   * /api/v1/resources/*} meant for listings also opens queue deletes, and the exact {@code
   * /api/v1/resources/queues/orders} the delete of that queue. Said at start.
   */
  List<String> openedBySkipPaths(List<RouteTable.Route> routes) {
    if (verifier == null) {
      return List.of();
    }
    return routes.stream()
        .filter(r -> r.access().grants(Access.READ_WRITE) && settings.skipsSome(r.path()))
        .map(r -> r.method() + " " + r.path())
        .toList();
  }

  /** The verified token's subject of an admitted request; null when auth is off or it has none. */
  static String subject(Request req) {
    Caller caller = req.caller();
    return caller == null ? null : caller.subject();
  }
}
