package queen.server.http.auth;

/**
 * Who sent a request whose bearer token was verified: the token's {@code sub} (null when it has
 * none) and the highest access its roles grant.
 */
public record Caller(String subject, Access access) {
  /** Whoever sends a request while authentication is off: every route is open to them. */
  public static final Caller OPEN = new Caller(null, Access.ADMIN);
}
