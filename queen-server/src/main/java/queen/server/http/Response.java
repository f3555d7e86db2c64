package queen.server.http;

import io.helidon.http.HeaderNames;
import io.helidon.http.Status;
import io.helidon.webserver.http.ServerResponse;

/**
 * A response as the routes write it: a status, headers, then the body once. Routes see nothing of
 * the HTTP server behind it.
 */
public final class Response {
  private final ServerResponse res;

  Response(ServerResponse res) {
    this.res = res;
  }

  Response status(int status) {
    res.status(Status.create(status));
    return this;
  }

  Response header(String name, String value) {
    res.header(HeaderNames.create(name), value);
    return this;
  }

  /** Sends the status, the headers and {@code body}, with its length. */
  void send(byte[] body) {
    res.send(body);
  }

  /** Sends the status and headers with no body and no content length (see {@link Replies}). */
  void send() {
    res.send();
  }
}
