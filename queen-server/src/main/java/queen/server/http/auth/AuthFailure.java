package queen.server.http.auth;

/** A bearer token that is missing or not accepted; the message says why, for a 401. */
public final class AuthFailure extends RuntimeException {
  public AuthFailure(String message) {
    super(message, null, false, false);
  }
}
