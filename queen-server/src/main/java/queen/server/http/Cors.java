package queen.server.http;

import java.net.URI;
import java.net.URISyntaxException;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.stream.Collectors;
import org.eclipse.jetty.http.HttpField;
import org.eclipse.jetty.http.HttpFields;
import org.eclipse.jetty.http.HttpHeader;
import org.eclipse.jetty.http.PreEncodedHttpField;

/**
 * Which web pages' scripts may call the broker from a browser (QUEEN_CORS_ORIGINS): any (Queen's
 * {@code *}, WIRE.md section 0, the default), none, or the pages of the origins listed. With a
 * list, a request a page of another origin sends is refused with 403 before any route runs: a
 * browser sends some requests without asking first (a form's POST), and with auth off any page a
 * user on the network opened could push, pop or delete queues. The broker's own pages (the
 * dashboard) are always allowed.
 *
 * @param origins the origins allowed, {@code scheme://host[:port]} in lower case; empty with {@code
 *     any} false: none
 */
public record Cors(boolean any, Set<String> origins) {
  private static final List<HttpField> SHARED =
      List.of(
          new PreEncodedHttpField(
              "Access-Control-Allow-Methods", "GET, POST, PUT, DELETE, OPTIONS"),
          new PreEncodedHttpField("Access-Control-Allow-Headers", "Content-Type, Authorization"),
          new PreEncodedHttpField("Access-Control-Max-Age", "86400"),
          // the count of a paged answer whose body has no room for it (a group's cursors)
          new PreEncodedHttpField("Access-Control-Expose-Headers", "X-Total-Count"));

  private static final HttpField ANY_ORIGIN =
      new PreEncodedHttpField("Access-Control-Allow-Origin", "*");
  private static final HttpField VARY = new PreEncodedHttpField(HttpHeader.VARY, "Origin");

  public static final Cors ANY = new Cors(true, Set.of());

  /**
   * {@code *}, {@code none}, or origins separated by commas.
   *
   * @throws IllegalArgumentException naming what is not an origin
   */
  public static Cors parse(String value) {
    String v = value.trim();
    if (v.equals("*")) {
      return ANY;
    }
    if (v.equalsIgnoreCase("none")) {
      return new Cors(false, Set.of());
    }
    return new Cors(
        false,
        Arrays.stream(v.split(","))
            .map(part -> origin(part.trim()))
            .collect(Collectors.toUnmodifiableSet()));
  }

  private static String origin(String text) {
    try {
      URI u = new URI(text);
      boolean bare = u.getRawPath() == null || u.getRawPath().isEmpty();
      if (("http".equals(u.getScheme()) || "https".equals(u.getScheme()))
          && u.getHost() != null
          && bare
          && u.getRawQuery() == null
          && u.getRawFragment() == null
          && u.getRawUserInfo() == null) {
        return normal(text);
      }
    } catch (URISyntaxException e) {
      // named below
    }
    throw new IllegalArgumentException(
        "'" + text + "' is not an origin (scheme://host or scheme://host:port)");
  }

  /**
   * Puts the CORS headers of the answer to a request from {@code origin} (null: none named) and
   * says whether the request may go on: not when a list is set and the page that sent it is of an
   * origin neither listed nor the broker's own ({@code host}, the request's Host header).
   */
  boolean admit(String origin, String host, HttpFields.Mutable headers) {
    if (any) {
      headers.put(ANY_ORIGIN);
    } else if (origin == null) {
      return true; // not a browser page of another origin: no CORS headers, nothing to refuse
    } else if (allowed(origin, host)) {
      headers.put("Access-Control-Allow-Origin", origin);
      headers.put(VARY);
    } else {
      return false;
    }
    SHARED.forEach(headers::put);
    return true;
  }

  /** Lower case, without the scheme's default port: a browser never sends https://h:443. */
  private static String normal(String origin) {
    String o = origin.toLowerCase(Locale.ROOT);
    if (o.startsWith("https://") && o.endsWith(":443")
        || o.startsWith("http://") && o.endsWith(":80")) {
      return o.substring(0, o.lastIndexOf(':'));
    }
    return o;
  }

  private boolean allowed(String origin, String host) {
    String o = normal(origin);
    if (origins.contains(o)) {
      return true;
    }
    int at = o.indexOf("://");
    return host != null && at > 0 && o.equals(normal(o.substring(0, at + 3) + host));
  }
}
