package queen.server.http;

/** A group of routes; each is declared with the access it requires, in a {@link RouteTable}. */
public interface Routes {
  void declare(RouteTable rules);
}
