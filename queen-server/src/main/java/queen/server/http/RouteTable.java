package queen.server.http;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import queen.server.http.auth.Access;

/**
 * Where routes are declared: a route cannot be added without the access it requires, and every
 * handler runs behind the {@link Gate} that checks it. The declared routes are kept, so a test can
 * walk the whole table.
 *
 * <p>A path pattern is literal segments, {@code {name}} segments that match any one segment, and an
 * optional last {@code *} that matches the rest. Requests are matched in declaration order. A HEAD
 * request matches the GET routes, and is answered by them unless they claim messages (see {@link
 * #claim}).
 */
public final class RouteTable {
  /** One declared route: its method, its path pattern and the access it requires. */
  public record Route(String method, String path, Access access) {}

  /** What a route does with a request it was admitted to. */
  @FunctionalInterface
  public interface Handler {
    void handle(Request req, Response res) throws Exception;
  }

  /** A route a request matched, with the values of its {@code {name}} segments. */
  record Match(Access access, Handler handler, Map<String, String> params, boolean safe) {}

  private record Compiled(
      String method, String[] segments, boolean rest, Access access, Handler h, boolean safe) {}

  private final List<Route> declared = new ArrayList<>();
  private final List<Compiled> compiled = new ArrayList<>();

  public RouteTable get(String path, Access access, Handler handler) {
    return add("GET", path, access, handler, true);
  }

  /**
   * A GET that claims messages (the pops, as in Queen): a HEAD, which load balancers and monitors
   * send expecting nothing to change, is not let through to it.
   */
  public RouteTable claim(String path, Access access, Handler handler) {
    return add("GET", path, access, handler, false);
  }

  public RouteTable post(String path, Access access, Handler handler) {
    return add("POST", path, access, handler, false);
  }

  public RouteTable delete(String path, Access access, Handler handler) {
    return add("DELETE", path, access, handler, false);
  }

  private RouteTable add(String method, String path, Access access, Handler handler, boolean safe) {
    declared.add(new Route(method, path, access));
    boolean rest = path.endsWith("/*");
    String[] segments = segments(rest ? path.substring(0, path.length() - 2) : path);
    compiled.add(new Compiled(method, segments, rest, access, handler, safe));
    return this;
  }

  List<Route> declared() {
    return List.copyOf(declared);
  }

  /**
   * The first route declared for this method (GET's for HEAD) whose pattern matches the path, or
   * null.
   *
   * @param parts the path's segments, each percent-decoded on its own (see {@link #segments})
   */
  Match match(String method, String[] parts) {
    String as = method.equals("HEAD") ? "GET" : method;
    for (Compiled c : compiled) {
      if (!c.method.equals(as)
          || parts.length < c.segments.length
          || (!c.rest && parts.length != c.segments.length)
          || (c.rest && parts.length == c.segments.length)) {
        continue;
      }
      Map<String, String> params = Map.of();
      boolean matches = true;
      for (int i = 0; i < c.segments.length && matches; i++) {
        String s = c.segments[i];
        if (s.startsWith("{")) {
          if (params.isEmpty()) {
            params = new HashMap<>(4);
          }
          params.put(s.substring(1, s.length() - 1), parts[i]);
          matches = !parts[i].isEmpty();
        } else {
          matches = s.equals(parts[i]);
        }
      }
      if (matches) {
        return new Match(c.access, c.h, params, c.safe);
      }
    }
    return null;
  }

  /**
   * "/a/b" as ["a", "b"]; "/" as []. An empty segment ("/a//b", "/a/") is kept, and matches none.
   */
  static String[] segments(String path) {
    String p = path.startsWith("/") ? path.substring(1) : path;
    return p.isEmpty() ? new String[0] : p.split("/", -1);
  }
}
