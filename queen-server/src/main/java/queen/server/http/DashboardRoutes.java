package queen.server.http;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HashMap;
import java.util.HexFormat;
import java.util.Map;
import java.util.Objects;
import java.util.zip.GZIPOutputStream;
import queen.server.http.auth.Access;
import queen.server.store.ClasspathFolder;

/**
 * The dashboard: static files from the broker's jar, {@code /} and {@code /assets/*}, public like
 * {@code /health} (the pages ask for a token themselves, and every API call they make is checked as
 * any other). Read once at start, compressed once; answered with a strong ETag and {@code
 * Cache-Control: no-cache}, so a browser revalidates (a 304 without a body) and never runs the
 * previous version's scripts after an upgrade.
 */
public final class DashboardRoutes implements Routes {
  private static final String FOLDER = "dashboard";

  /** Scripts, styles and images from the broker itself, nothing inline, nothing from elsewhere. */
  private static final String POLICY =
      "default-src 'self'; img-src 'self' data:; object-src 'none'; base-uri 'none';"
          + " frame-ancestors 'none'; form-action 'self'";

  /** One file, ready to send. */
  private record StaticFile(String type, byte[] plain, byte[] gzip, String tag) {}

  private final Map<String, StaticFile> files = new HashMap<>();

  public DashboardRoutes() {
    ClasspathFolder.read(DashboardRoutes.class.getClassLoader(), FOLDER)
        .forEach((name, bytes) -> files.put(name, prepare(name, bytes)));
  }

  @Override
  public void declare(RouteTable rules) {
    rules.get("/", Access.PUBLIC, (req, res) -> send(req, res, "index.html"));
    rules.get(
        "/assets/*", Access.PUBLIC, (req, res) -> send(req, res, String.join("/", req.segments())));
  }

  private void send(Request req, Response res, String name) {
    StaticFile f = files.get(name);
    if (f == null) {
      // a JSON error, as every other route answers one
      Replies.error(
          res, 404, name.equals("index.html") ? "The dashboard is not in this build" : "Not found");
      return;
    }
    boolean gzip =
        f.gzip() != null
            && Objects.requireNonNullElse(req.header("Accept-Encoding"), "").contains("gzip");
    // each coding is its own representation, with its own tag
    String etag = "\"" + f.tag() + (gzip ? "-gz\"" : "\"");
    res.header("ETag", etag);
    res.header("Cache-Control", "no-cache");
    res.header("Vary", "Accept-Encoding");
    res.header("X-Content-Type-Options", "nosniff");
    if (f.type().startsWith("text/html")) {
      res.header("Content-Security-Policy", POLICY);
    }
    if (matches(Objects.requireNonNullElse(req.header("If-None-Match"), ""), etag)) {
      res.status(304);
      res.send();
      return;
    }
    res.header("Content-Type", f.type());
    if (gzip) {
      res.header("Content-Encoding", "gzip");
    }
    res.send(gzip ? f.gzip() : f.plain());
  }

  /** Whether an If-None-Match list ({@code *}, or tags, weak or strong) names the tag. */
  private static boolean matches(String ifNoneMatch, String etag) {
    for (String tag : ifNoneMatch.split(",")) {
      String t = tag.trim();
      if (t.equals("*") || t.equals(etag) || t.equals("W/" + etag)) {
        return true;
      }
    }
    return false;
  }

  private static StaticFile prepare(String name, byte[] bytes) {
    String type = type(name);
    byte[] gzip = type.startsWith("image/png") ? null : gzip(bytes);
    try {
      byte[] digest = MessageDigest.getInstance("SHA-256").digest(bytes);
      return new StaticFile(
          type,
          bytes,
          gzip != null && gzip.length < bytes.length ? gzip : null,
          HexFormat.of().formatHex(digest, 0, 12));
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException(e);
    }
  }

  private static String type(String name) {
    String ext = name.substring(name.lastIndexOf('.') + 1);
    return switch (ext) {
      case "html" -> "text/html; charset=utf-8";
      case "js" -> "text/javascript; charset=utf-8";
      case "css" -> "text/css; charset=utf-8";
      case "svg" -> "image/svg+xml";
      case "png" -> "image/png";
      case "json" -> "application/json";
      default -> "application/octet-stream";
    };
  }

  private static byte[] gzip(byte[] bytes) {
    ByteArrayOutputStream out = new ByteArrayOutputStream(bytes.length / 3 + 64);
    try (GZIPOutputStream z = new GZIPOutputStream(out)) {
      z.write(bytes);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    return out.toByteArray();
  }
}
