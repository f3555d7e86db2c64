package queen.server.http;

import io.helidon.http.Method;
import io.helidon.webserver.http.HttpRules;
import java.util.List;
import queen.server.http.auth.Access;

/**
 * Where routes are declared: a route cannot be added without the access it requires, and every
 * handler runs behind the {@link Gate} that checks it. The declared routes are kept, so a test can
 * walk the whole table.
 */
public final class RouteTable {
  /** One declared route: its method, its path pattern and the access it requires. */
  public record Route(String method, String path, Access access) {}

  /** What a route does with a request it was admitted to. */
  @FunctionalInterface
  public interface Handler {
    void handle(Request req, Response res) throws Exception;
  }

  private final HttpRules rules;
  private final Gate gate;
  private final List<Route> declared;

  RouteTable(HttpRules rules, Gate gate, List<Route> declared) {
    this.rules = rules;
    this.gate = gate;
    this.declared = declared;
  }

  public RouteTable get(String path, Access access, Handler handler) {
    return add(Method.GET, path, access, handler);
  }

  public RouteTable post(String path, Access access, Handler handler) {
    return add(Method.POST, path, access, handler);
  }

  public RouteTable delete(String path, Access access, Handler handler) {
    return add(Method.DELETE, path, access, handler);
  }

  private RouteTable add(Method method, String path, Access access, Handler handler) {
    declared.add(new Route(method.text(), path, access));
    rules.route(
        method,
        path,
        (req, res) -> {
          Request request = new Request(req);
          gate.admit(request, access);
          handler.handle(request, new Response(res));
        });
    return this;
  }
}
