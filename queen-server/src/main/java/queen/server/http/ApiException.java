package queen.server.http;

/**
 * A request the broker refuses, answered with {@code status} and {@code {"error": message}}. The
 * message names the field or parameter at fault; it is written for the client, never a stack trace
 * or PostgreSQL text.
 */
final class ApiException extends RuntimeException {
  private final int status;

  ApiException(int status, String message) {
    super(message, null, false, false);
    this.status = status;
  }

  static ApiException badRequest(String message) {
    return new ApiException(400, message);
  }

  static ApiException notFound(String message) {
    return new ApiException(404, message);
  }

  int status() {
    return status;
  }
}
