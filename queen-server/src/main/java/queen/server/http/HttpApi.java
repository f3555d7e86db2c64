package queen.server.http;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Predicate;
import org.eclipse.jetty.http.HttpException;
import org.eclipse.jetty.http.HttpField;
import org.eclipse.jetty.http.HttpFields;
import org.eclipse.jetty.http.HttpHeader;
import org.eclipse.jetty.http.HttpStatus;
import org.eclipse.jetty.http.HttpURI;
import org.eclipse.jetty.http.PreEncodedHttpField;
import org.eclipse.jetty.http.UriCompliance;
import org.eclipse.jetty.io.Content;
import org.eclipse.jetty.io.EndPoint;
import org.eclipse.jetty.server.Handler;
import org.eclipse.jetty.server.handler.ErrorHandler;
import org.eclipse.jetty.util.Callback;
import org.eclipse.jetty.util.URIUtil;
import org.eclipse.jetty.util.thread.Scheduler;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import queen.server.codec.CorruptSegmentException;
import queen.server.codec.PayloadKeyException;
import queen.server.http.auth.Access;
import queen.server.http.auth.AuthFailure;
import queen.server.http.auth.KeysUnavailable;
import queen.server.push.BufferUnavailableException;
import queen.server.store.PartitionMissingException;
import queen.server.store.StoreException;

/**
 * The broker's HTTP surface: the routes, CORS, and the rule that every failure is a JSON error.
 *
 * <p>Client mistakes are 4xx naming the field; a database that does not answer is 503 with a retry
 * hint (the clients retry 5xx and treat any 4xx as fatal); anything else is our bug, a 500 with a
 * generic message, logged with its stack trace here and never sent to the client.
 */
public final class HttpApi extends Handler.Abstract {
  private static final Logger log = LoggerFactory.getLogger(HttpApi.class);

  private static final Predicate<TimeoutException> QUIET = timeout -> false;
  private static final HttpField CLOSE = new PreEncodedHttpField(HttpHeader.CONNECTION, "close");
  private static final long SKIP_IDLE_MS = 5_000;
  private static final long SKIP_BYTES_PER_SECOND = 1 << 20;

  private final Gate gate;
  private final RouteTable table;
  private final long maxBodyBytes;
  private final Cors cors;
  private volatile boolean closing;

  private HttpApi(Gate gate, RouteTable table, long maxBodyBytes, Cors cors) {
    this.gate = gate;
    this.table = table;
    this.maxBodyBytes = maxBodyBytes;
    this.cors = cors;
  }

  /**
   * The routes of the given groups behind the gate, then the JSON 404 for everything else
   * (read-write, as WIRE.md section 0 has unknown routes); bodies over {@code maxBodyBytes} are
   * 413; {@code cors} says which web pages may call it.
   */
  public static HttpApi of(Gate gate, List<Routes> groups, long maxBodyBytes, Cors cors) {
    RouteTable table = new RouteTable();
    for (Routes group : groups) {
      group.declare(table);
    }
    List<String> opened = gate.openedBySkipPaths(table.declared());
    if (!opened.isEmpty()) {
      log.warn(
          "JWT_SKIP_PATHS serves without a token these routes, which need read-write or admin"
              + " access: {}",
          opened);
    }
    return new HttpApi(gate, table, maxBodyBytes, cors);
  }

  /** Every route declared, with the access it requires. */
  public List<RouteTable.Route> routes() {
    return table.declared();
  }

  /** The broker is stopping: from now on every answer closes its connection. */
  public void closeConnections() {
    closing = true;
  }

  @Override
  public boolean handle(
      org.eclipse.jetty.server.Request request,
      org.eclipse.jetty.server.Response response,
      Callback done) {
    // a long-poll waits quietly up to its own deadline: the connection's idle timeout ends only
    // quiet connections between requests and stalled reads or writes
    request.addIdleTimeoutListener(QUIET);
    boolean admitted =
        cors.admit(
            request.getHeaders().get(HttpHeader.ORIGIN),
            request.getHeaders().get(HttpHeader.HOST),
            response.getHeaders());
    Response res = new Response(response, done, () -> beforeAnswer(request, response));
    res.onFailure(e -> fail(request, res, e));
    try {
      dispatch(request, res, admitted);
      if (!res.deferred() && !res.sent()) {
        throw new IllegalStateException("the route sent no answer");
      }
    } catch (Exception e) {
      if (res.sent()) {
        log.error("{} {} failed after answering", request.getMethod(), path(request), e);
      } else {
        fail(request, res, e);
      }
    }
    return true;
  }

  private void dispatch(org.eclipse.jetty.server.Request request, Response res, boolean admitted)
      throws Exception {
    if (request.getLength() > maxBodyBytes) {
      // refused whatever the route: one that reads no body answered as if there were none (its
      // connection is closed after the 413 either way, the body unread)
      throw new ApiException(413, "Request body too large");
    }
    if (hasDotSegment(request.getHttpURI().getPath())) {
      // routes match the path with its dot segments resolved: the seek of a partition named ".."
      // (.../queues/q/partitions/../seek) was the seek of every partition of queue q
      Replies.error(res, 400, "A name in the path must not be '.' or '..'");
      return;
    }
    if (!admitted) {
      Replies.error(
          res, 403, "Requests from this web page's origin are not allowed (QUEEN_CORS_ORIGINS)");
      return;
    }
    String method = request.getMethod();
    if (method.equals("OPTIONS")) {
      res.status(200).header("Content-Length", "0").send();
      return;
    }
    String[] segments = segments(request);
    if (segments == null) {
      throw ApiException.badRequest("The path is not valid percent-encoded UTF-8");
    }
    RouteTable.Match match = table.match(method, segments);
    Request req =
        new Request(request, segments, match == null ? Map.of() : match.params(), maxBodyBytes);
    if (match == null) {
      gate.admit(req, Access.READ_WRITE);
      Replies.error(res, 404, "Not found");
      return;
    }
    gate.admit(req, match.access());
    if (method.equals("HEAD") && !match.safe()) {
      res.header("Allow", "GET");
      Replies.error(res, 405, "HEAD is not served here: a GET of this route claims messages");
      return;
    }
    match.handler().handle(req, res);
  }

  private void beforeAnswer(
      org.eclipse.jetty.server.Request request, org.eclipse.jetty.server.Response response) {
    if (!skipUnreadBody(request)) {
      response.getHeaders().put(CLOSE); // the client sees why the connection ends
    }
    if (closing) {
      // decided when answering, not on arrival: the long-polls a stopping broker ends go too
      response.getHeaders().put(CLOSE); // its client reconnects to a broker that stays
    }
  }

  /**
   * Reads what is left of a body the route did not read (a refused request's, say): answered with
   * part of its body unread, the connection would be closed under a client that already sends its
   * next request on it, and a client whose body was cut short may see a reset instead of the answer
   * (a push refused 401 is retried as a network error). Read while it keeps coming: at most {@link
   * #SKIP_IDLE_MS} between bytes, and all of it within twice that plus a second per {@link
   * #SKIP_BYTES_PER_SECOND}. A refused client, which needs no token, held the request for the
   * connection's idle timeout (5 minutes) per byte it trickled.
   *
   * @return false when a remainder is left unread, and the connection ends after the answer
   */
  private boolean skipUnreadBody(org.eclipse.jetty.server.Request request) {
    long length = request.getLength();
    long left = length - org.eclipse.jetty.server.Request.getContentBytesRead(request);
    if (length <= 0 || left <= 0) {
      return true;
    }
    if (length > maxBodyBytes
        || left == length && request.getHeaders().contains(HttpHeader.EXPECT, "100-continue")) {
      // nothing sent yet, and the client waits to be asked: reading would ask for all of it
      return false;
    }
    EndPoint endPoint = request.getConnectionMetaData().getConnection().getEndPoint();
    long idle = endPoint.getIdleTimeout();
    endPoint.setIdleTimeout(SKIP_IDLE_MS);
    // past the idle timeout, which answers a body that stopped; the deadline ends a trickle
    long deadline = 2 * SKIP_IDLE_MS + 1_000 * left / SKIP_BYTES_PER_SECOND;
    Scheduler.Task cut =
        request
            .getComponents()
            .getScheduler()
            .schedule(endPoint::close, deadline, TimeUnit.MILLISECONDS);
    try {
      Content.Source.consumeAll(request);
      return true;
    } catch (IOException e) {
      log.debug("{} {}: the unread body ended early", request.getMethod(), path(request));
      return false;
    } finally {
      cut.cancel();
      endPoint.setIdleTimeout(idle);
    }
  }

  /**
   * What Jetty lets through to be judged here. Names in the path are the routes' to judge, so that
   * a refusal names the field: control characters (Fields.name), an empty one (no route matches); a
   * '/' encoded in one stays in it ({@link #segments}). A path that is not percent-encoded UTF-8 is
   * refused by {@link #segments}. Each after the body is read: Jetty's own 400 closed the
   * connection with a body still arriving, and its client met a reset instead of the answer. (Jetty
   * still refuses a NUL, %00, itself, whatever the compliance allows.)
   */
  public static UriCompliance uriCompliance() {
    return UriCompliance.DEFAULT.with(
        "queen",
        UriCompliance.Violation.AMBIGUOUS_PATH_SEPARATOR,
        UriCompliance.Violation.AMBIGUOUS_PATH_ENCODING,
        UriCompliance.Violation.SUSPICIOUS_PATH_CHARACTERS,
        UriCompliance.Violation.AMBIGUOUS_EMPTY_SEGMENT,
        UriCompliance.Violation.BAD_UTF8_ENCODING);
  }

  /**
   * The path's segments, each percent-decoded on its own after the split, so that a name holding an
   * encoded '/' stays one segment and reaches its own route: a group named "g/queues/q" is deleted
   * by DELETE /api/v1/consumer-groups/g%2Fqueues%2Fq, where the decoded path would have matched the
   * route of group g on queue q. Null when the encoding is not UTF-8.
   */
  private static String[] segments(org.eclipse.jetty.server.Request request) {
    HttpURI uri = request.getHttpURI();
    if (uri.hasViolation(UriCompliance.Violation.BAD_UTF8_ENCODING)) {
      return null; // decoded, its bad bytes would be U+FFFD: a queue named by no one
    }
    try {
      // canonical: without ';' parameters or dot segments, with %2F and %25 still encoded
      String[] segments = RouteTable.segments(uri.getCanonicalPath());
      for (int i = 0; i < segments.length; i++) {
        segments[i] = URIUtil.decodePath(segments[i]);
      }
      return segments;
    } catch (IllegalArgumentException e) {
      return null;
    }
  }

  /** The decoded path, for the log; null when its percent-encoding is not UTF-8. */
  private static String path(org.eclipse.jetty.server.Request request) {
    HttpURI uri = request.getHttpURI();
    if (uri.hasViolation(UriCompliance.Violation.BAD_UTF8_ENCODING)) {
      return null; // decoded, its bad bytes would be U+FFFD: a queue named by no one
    }
    try {
      return uri.getDecodedPath();
    } catch (IllegalArgumentException e) {
      return null;
    }
  }

  /** Whether a raw path has a segment {@code .} or {@code ..} (before any {@code ;} parameter). */
  static boolean hasDotSegment(String rawPath) {
    for (int i = rawPath.indexOf("/."); i >= 0; i = rawPath.indexOf("/.", i + 1)) {
      int end = i + 2;
      if (end < rawPath.length() && rawPath.charAt(end) == '.') {
        end++;
      }
      if (end == rawPath.length() || rawPath.charAt(end) == '/' || rawPath.charAt(end) == ';') {
        return true;
      }
    }
    return false;
  }

  /**
   * JSON bodies for the errors Jetty answers itself (malformed HTTP, headers over the limit), so
   * that every error a client sees has the same shape.
   */
  public static ErrorHandler errors() {
    return new ErrorHandler() {
      @Override
      public boolean errorPageForMethod(String method) {
        return true; // every method's error is JSON, not only GET's and POST's
      }

      @Override
      protected void generateResponse(
          org.eclipse.jetty.server.Request request,
          org.eclipse.jetty.server.Response response,
          int code,
          String message,
          Throwable cause,
          Callback callback) {
        response.getHeaders().put(HttpHeader.CONTENT_TYPE, "application/json");
        response.write(true, ByteBuffer.wrap(errorBody(code)), callback);
      }

      @Override
      public ByteBuffer badMessageError(int status, String reason, HttpFields.Mutable fields) {
        fields.put(HttpHeader.CONTENT_TYPE, "application/json");
        return ByteBuffer.wrap(errorBody(status));
      }
    };
  }

  private static byte[] errorBody(int status) {
    return Json.bytes(Json.object().put("error", describe(status)));
  }

  private static String describe(int status) {
    return status == 413 ? "Request body too large" : HttpStatus.getMessage(status);
  }

  private static void fail(org.eclipse.jetty.server.Request req, Response res, Exception e) {
    switch (e) {
      case ApiException api -> Replies.error(res, api.status(), api.getMessage());
      case AuthFailure auth -> {
        res.header("WWW-Authenticate", "Bearer");
        Replies.error(res, 401, auth.getMessage());
      }
      case CorruptSegmentException corrupt -> {
        // stored data, not a bug here: the message names the push and what to do
        log.error("{} {}: {}", req.getMethod(), path(req), corrupt.getMessage());
        Replies.error(res, 500, corrupt.getMessage());
      }
      case PayloadKeyException key -> {
        log.warn("{} {}: {}", req.getMethod(), path(req), key.getMessage());
        res.header("Retry-After", "5");
        Replies.error(res, 503, key.getMessage());
      }
      case BufferUnavailableException buffer -> {
        res.header("Retry-After", "1");
        Replies.error(res, 503, buffer.getMessage());
      }
      case KeysUnavailable keys -> {
        res.header("Retry-After", "5");
        Replies.error(res, 503, keys.getMessage());
      }
      case HttpException http -> Replies.error(res, http.getCode(), describe(http.getCode()));
      case PartitionMissingException missing -> {
        // its partitions removed as inactive again at each of the push's preparations
        res.header("Retry-After", "1");
        Replies.error(res, 503, missing.getMessage() + ", retry");
      }
      case StoreException store when store.conflict() -> {
        // the database answered: not an outage, and one that repeats is worth an operator's look
        log.warn("{} {}: conflict, answered 503: {}", req.getMethod(), path(req), e.getMessage());
        res.header("Retry-After", "1");
        Replies.error(
            res,
            503,
            "Conflict with concurrent work on the same data (a deadlock, or a row locked or"
                + " removed meanwhile), retry");
      }
      case StoreException store when store.unavailable() -> {
        // the database logs an outage once; each refused request only at DEBUG
        log.debug("{} {}: database unavailable: {}", req.getMethod(), path(req), e.getMessage());
        res.header("Retry-After", "1");
        Replies.error(res, 503, "Database unavailable, retry later");
      }
      case StoreException store when store.cancelled() -> {
        // not our bug and not an outage: the request asked for more than the limit allows, or an
        // operator cancelled it
        log.info("{} {}: {}", req.getMethod(), path(req), e.getMessage());
        Replies.error(
            res,
            503,
            "The database cancelled the query: admin reads stop after"
                + " QUEEN_ADMIN_STATEMENT_TIMEOUT_MS (narrow this one with filters, a time window,"
                + " a smaller page or offset), and an operator may cancel any query");
      }
      default -> {
        log.error("{} {} failed", req.getMethod(), path(req), e);
        Replies.error(res, 500, "Internal error");
      }
    }
  }
}
