package queen.server.http;

import io.helidon.http.HeaderNames;
import io.helidon.webserver.http.ServerRequest;
import java.net.InetSocketAddress;
import queen.server.http.auth.Caller;

/**
 * A request as the routes read it: its method and path, the path parameters of the route it
 * matched, query parameters, headers, body and peers, and the caller the {@link Gate} admitted.
 * Routes see nothing of the HTTP server behind it.
 */
public final class Request {
  private final ServerRequest req;
  private Caller caller;

  Request(ServerRequest req) {
    this.req = req;
  }

  String method() {
    return req.prologue().method().text();
  }

  /** The path, percent-decoded. */
  String path() {
    return req.path().path();
  }

  /** A path parameter of the matched route, percent-decoded once. */
  String pathParam(String name) {
    return req.path().pathParameters().get(name);
  }

  /** The first value of a query parameter, percent-decoded; null when absent. */
  String query(String name) {
    return req.query().first(name).orElse(null);
  }

  /** The first value of a header; null when absent. */
  String header(String name) {
    return req.headers().first(HeaderNames.create(name)).orElse(null);
  }

  /** The whole body; empty when there is none. */
  byte[] body() {
    return req.content().hasEntity() ? req.content().as(byte[].class) : new byte[0];
  }

  /** The client's address and port; null when it is not an IP socket. */
  InetSocketAddress remote() {
    return req.remotePeer().address() instanceof InetSocketAddress a ? a : null;
  }

  /** The broker's port this request came in on. */
  int localPort() {
    return req.localPeer().port();
  }

  /** The verified caller, when authentication is on and admitted this request; else null. */
  Caller caller() {
    return caller;
  }

  void admitted(Caller caller) {
    this.caller = caller;
  }
}
