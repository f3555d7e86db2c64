package queen.server.http;

import io.helidon.http.DirectHandler;
import io.helidon.http.HeaderName;
import io.helidon.http.HeaderNames;
import io.helidon.http.HttpException;
import io.helidon.http.Status;
import io.helidon.webserver.http.DirectHandlers;
import io.helidon.webserver.http.HttpRouting;
import io.helidon.webserver.http.ServerRequest;
import io.helidon.webserver.http.ServerResponse;
import java.util.ArrayList;
import java.util.List;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import queen.server.codec.PayloadKeyException;
import queen.server.http.auth.Access;
import queen.server.http.auth.AuthFailure;
import queen.server.http.auth.KeysUnavailable;
import queen.server.push.BufferUnavailableException;
import queen.server.store.StoreException;

/**
 * The broker's HTTP surface: the routes, CORS, and the rule that every failure is a JSON error.
 *
 * <p>Client mistakes are 4xx naming the field; a database that does not answer is 503 with a retry
 * hint (the clients retry 5xx and treat any 4xx as fatal); anything else is our bug, a 500 with a
 * generic message, logged with its stack trace here and never sent to the client.
 */
public final class HttpApi {
  private static final Logger log = LoggerFactory.getLogger(HttpApi.class);

  private HttpApi() {}

  /**
   * Installs the routes of the given groups behind the gate, then the JSON 404 for everything else
   * (read-write, as WIRE.md section 0 has unknown routes), and answers the table of declared
   * routes.
   */
  public static List<RouteTable.Route> install(
      HttpRouting.Builder routing, Gate gate, List<Routes> groups) {
    routing.addFilter(
        (chain, req, res) -> {
          cors(res);
          if (encodesSlash(req.path().rawPath())) {
            // routes are matched on the decoded path: a group named "g/queues/q" in DELETE
            // /api/v1/consumer-groups/{group} reached the route of group g on queue q
            Replies.error(new Response(res), 400, "A name in the path must not contain '/' (%2F)");
            return;
          }
          chain.proceed();
        });
    routing.options(
        (req, res) -> {
          res.header(HeaderNames.CONTENT_LENGTH, "0");
          res.status(Status.OK_200).send();
        });
    List<RouteTable.Route> declared = new ArrayList<>();
    RouteTable table = new RouteTable(routing, gate, declared);
    for (Routes group : groups) {
      group.declare(table);
    }
    routing.any(
        (req, res) -> {
          gate.admit(new Request(req), Access.READ_WRITE);
          Replies.error(new Response(res), 404, "Not found");
        });
    routing.error(Exception.class, HttpApi::fail);
    List<String> opened = gate.openedBySkipPaths(declared);
    if (!opened.isEmpty()) {
      log.warn(
          "JWT_SKIP_PATHS serves without a token these routes, which need read-write or admin"
              + " access: {}",
          opened);
    }
    return List.copyOf(declared);
  }

  /** Whether a raw path holds {@code %2F} in either case, without a copy of it per request. */
  static boolean encodesSlash(String rawPath) {
    for (int i = rawPath.indexOf('%'); i >= 0; i = rawPath.indexOf('%', i + 1)) {
      if (rawPath.regionMatches(true, i, "%2F", 0, 3)) {
        return true;
      }
    }
    return false;
  }

  private static final HeaderName ALLOW_ORIGIN = HeaderNames.create("Access-Control-Allow-Origin");
  private static final HeaderName ALLOW_METHODS =
      HeaderNames.create("Access-Control-Allow-Methods");
  private static final HeaderName ALLOW_HEADERS =
      HeaderNames.create("Access-Control-Allow-Headers");
  private static final HeaderName MAX_AGE = HeaderNames.create("Access-Control-Max-Age");
  private static final HeaderName EXPOSE_HEADERS =
      HeaderNames.create("Access-Control-Expose-Headers");

  private static void cors(ServerResponse res) {
    res.header(ALLOW_ORIGIN, "*");
    res.header(ALLOW_METHODS, "GET, POST, PUT, DELETE, OPTIONS");
    res.header(ALLOW_HEADERS, "Content-Type, Authorization");
    res.header(MAX_AGE, "86400");
    // the count of a paged answer whose body has no room for it (a group's cursors)
    res.header(EXPOSE_HEADERS, "X-Total-Count");
  }

  /**
   * JSON bodies for the errors Helidon answers before routing (malformed HTTP, a body over
   * MAX_BODY_BYTES), so that every error a client sees has the same shape.
   */
  public static DirectHandlers directHandlers() {
    DirectHandler json =
        (request, event, status, headers, message) ->
            DirectHandler.TransportResponse.builder()
                .status(status)
                .headers(headers)
                .header(HeaderNames.CONTENT_TYPE, "application/json")
                .entity(Json.bytes(Json.object().put("error", describe(status))))
                .build();
    DirectHandlers.Builder b = DirectHandlers.builder();
    for (DirectHandler.EventType event : DirectHandler.EventType.values()) {
      b.addHandler(event, json);
    }
    return b.build();
  }

  private static String describe(Status status) {
    return status.code() == Status.REQUEST_ENTITY_TOO_LARGE_413.code()
        ? "Request body too large"
        : status.reasonPhrase();
  }

  private static void fail(ServerRequest req, ServerResponse served, Exception e) {
    Response res = new Response(served);
    switch (e) {
      case ApiException api -> Replies.error(res, api.status(), api.getMessage());
      case AuthFailure auth -> {
        res.header("WWW-Authenticate", "Bearer");
        Replies.error(res, 401, auth.getMessage());
      }
      case PayloadKeyException key -> {
        log.warn("{} {}: {}", req.prologue().method(), req.path().path(), key.getMessage());
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
      case HttpException http -> Replies.error(res, http.status().code(), describe(http.status()));
      case StoreException store when store.unavailable() -> {
        // the database logs an outage once; each refused request only at DEBUG
        log.debug(
            "{} {}: database unavailable: {}",
            req.prologue().method(),
            req.path().path(),
            e.getMessage());
        res.header("Retry-After", "1");
        Replies.error(res, 503, "Database unavailable, retry later");
      }
      case StoreException store when store.cancelled() -> {
        // not our bug and not an outage: the request asked for more than the limit allows, or an
        // operator cancelled it
        log.info("{} {}: {}", req.prologue().method(), req.path().path(), e.getMessage());
        Replies.error(
            res,
            503,
            "The database cancelled the query: admin reads stop after"
                + " QUEEN_ADMIN_STATEMENT_TIMEOUT_MS (narrow this one with filters, a time window,"
                + " a smaller page or offset), and an operator may cancel any query");
      }
      default -> {
        log.error("{} {} failed", req.prologue().method(), req.path().path(), e);
        Replies.error(res, 500, "Internal error");
      }
    }
  }
}
