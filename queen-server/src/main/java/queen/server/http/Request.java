package queen.server.http;

import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import org.eclipse.jetty.util.Fields;
import queen.server.http.auth.Access;
import queen.server.http.auth.Caller;

/**
 * A request as the routes read it: its method and path, the path parameters of the route it
 * matched, query parameters, headers, body and peers, and the caller the {@link Gate} admitted.
 * Routes see nothing of the HTTP server behind it.
 */
public final class Request {
  /** Bodies up to this announced length are read into an array allocated before they arrive. */
  private static final int EXACT_READ_BYTES = 16 * 1024;

  private final org.eclipse.jetty.server.Request req;
  private final List<String> segments;
  private final Map<String, String> pathParams;
  private final long maxBody;
  private Fields query;
  private Caller caller;

  Request(
      org.eclipse.jetty.server.Request req,
      String[] segments,
      Map<String, String> pathParams,
      long maxBody) {
    this.req = req;
    this.segments = List.of(segments);
    this.pathParams = pathParams;
    this.maxBody = maxBody;
  }

  /** The path's segments, each percent-decoded: one may hold a '/'. */
  List<String> segments() {
    return segments;
  }

  /** A path parameter of the matched route, percent-decoded once. */
  String pathParam(String name) {
    return pathParams.get(name);
  }

  /** The first value of a query parameter, percent-decoded; null when absent. */
  String query(String name) {
    if (query == null) {
      try {
        query =
            org.eclipse.jetty.server.Request.extractQueryParameters(req, StandardCharsets.UTF_8);
      } catch (IllegalArgumentException e) {
        // a query that is not percent-encoded UTF-8 names no parameter a route could read
        throw ApiException.badRequest("The query string is not valid percent-encoded UTF-8");
      }
    }
    return query.getValue(name);
  }

  /** The first value of a header; null when absent. */
  String header(String name) {
    return req.getHeaders().get(name);
  }

  /**
   * The whole body, at most MAX_BODY_BYTES (413 past it; an announced length past it was refused
   * before the route, in HttpApi); empty when there is none.
   */
  byte[] body() {
    long announced = req.getLength();
    try (InputStream in = org.eclipse.jetty.server.Request.asInputStream(req)) {
      if (announced >= 0 && announced <= EXACT_READ_BYTES) {
        // a small body is read into an array of its announced size: readNBytes alone reads 16 kB
        // chunks and copies them; a bigger one grows as its bytes arrive, so that a length no
        // body follows claims no memory
        byte[] body = new byte[(int) announced];
        if (in.readNBytes(body, 0, body.length) < body.length) {
          throw new EOFException("the body ended before its Content-Length");
        }
        return body;
      }
      byte[] body = in.readNBytes((int) Math.min(maxBody + 1, Integer.MAX_VALUE - 8));
      if (body.length > maxBody) {
        throw new ApiException(413, "Request body too large");
      }
      return body;
    } catch (IOException e) {
      // the client's connection failed mid-body (closed, reset, or too slow for the idle timeout)
      throw ApiException.badRequest("The request body could not be read: " + e.getMessage());
    }
  }

  /** The client's address and port; null when it is not an IP socket. */
  InetSocketAddress remote() {
    return req.getConnectionMetaData().getRemoteSocketAddress() instanceof InetSocketAddress a
        ? a
        : null;
  }

  /** The broker's port this request came in on. */
  int localPort() {
    return org.eclipse.jetty.server.Request.getLocalPort(req);
  }

  /**
   * The caller: the verified one when authentication is on and admitted this request with a token,
   * {@link Caller#OPEN} when it is off; else null.
   */
  Caller caller() {
    return caller;
  }

  /** Whether the caller was granted {@code access}: false for one let in without a token. */
  boolean grants(Access access) {
    return caller != null && caller.access().grants(access);
  }

  void admitted(Caller caller) {
    this.caller = caller;
  }
}
