package queen.server.http.auth;

/**
 * The JWKS endpoint did not answer, so no token can be checked now: a 503 the clients retry, not a
 * 401 that would stop their consume loops for an outage of the identity provider.
 */
public final class KeysUnavailable extends RuntimeException {
  public KeysUnavailable() {
    super("Signing keys unavailable, retry later", null, false, false);
  }
}
