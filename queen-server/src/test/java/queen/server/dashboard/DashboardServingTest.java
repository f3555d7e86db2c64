package queen.server.dashboard;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.Map;
import java.util.zip.GZIPInputStream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import queen.server.TestBroker;

/** The dashboard's files: from the jar, compressed, revalidated by ETag, public with auth on. */
class DashboardServingTest {
  @RegisterExtension
  static final TestBroker broker =
      new TestBroker(
          Map.of("JWT_ENABLED", "true", "JWT_SECRET", "a-secret-of-at-least-32-bytes-for-hs256"));

  private static final HttpClient HTTP = HttpClient.newHttpClient();

  private static HttpResponse<byte[]> get(String path, String... headers) throws Exception {
    HttpRequest.Builder b = HttpRequest.newBuilder(broker.uri(path));
    if (headers.length > 0) {
      b.headers(headers);
    }
    return HTTP.send(b.build(), HttpResponse.BodyHandlers.ofByteArray());
  }

  @Test
  void thePageIsServedWithoutATokenAndRevalidatedByItsETag() throws Exception {
    HttpResponse<byte[]> page = get("/");
    assertThat(page.statusCode()).isEqualTo(200);
    assertThat(page.headers().firstValue("content-type")).hasValue("text/html; charset=utf-8");
    assertThat(page.headers().firstValue("cache-control")).hasValue("no-cache");
    assertThat(new String(page.body())).contains("<script type=\"module\"");
    assertThat(page.headers().firstValue("content-security-policy").orElseThrow())
        .contains("default-src 'self'");
    String etag = page.headers().firstValue("etag").orElseThrow();

    HttpResponse<byte[]> again = get("/", "If-None-Match", etag);
    assertThat(again.statusCode()).isEqualTo(304);
    assertThat(again.body()).isEmpty();
  }

  @Test
  void assetsAreCompressedForClientsThatAcceptIt() throws Exception {
    HttpResponse<byte[]> plain = get("/assets/style.css");
    assertThat(plain.statusCode()).isEqualTo(200);
    assertThat(plain.headers().firstValue("content-type")).hasValue("text/css; charset=utf-8");
    HttpResponse<byte[]> zipped = get("/assets/style.css", "Accept-Encoding", "gzip");
    assertThat(zipped.headers().firstValue("content-encoding")).hasValue("gzip");
    assertThat(zipped.headers().firstValue("etag"))
        .as("each coding has its own tag")
        .isNotEqualTo(plain.headers().firstValue("etag"));
    String tag = zipped.headers().firstValue("etag").orElseThrow();
    assertThat(
            get("/assets/style.css", "Accept-Encoding", "gzip", "If-None-Match", "\"x\", " + tag)
                .statusCode())
        .isEqualTo(304);
    assertThat(zipped.body().length).isLessThan(plain.body().length);
    assertThat(gunzip(zipped.body())).isEqualTo(plain.body());
    assertThat(get("/assets/app.js").headers().firstValue("content-type"))
        .hasValue("text/javascript; charset=utf-8");
  }

  @Test
  void unknownAssetsAre404sAndTheApiStillNeedsAToken() throws Exception {
    HttpResponse<byte[]> missing = get("/assets/nope.js");
    assertThat(missing.statusCode()).isEqualTo(404);
    // a JSON error, as on every route
    assertThat(missing.headers().firstValue("content-type").orElse(""))
        .startsWith("application/json");
    assertThat(get("/api/v1/resources/queues").statusCode()).isEqualTo(401);
  }

  private static byte[] gunzip(byte[] bytes) throws IOException {
    try (GZIPInputStream in = new GZIPInputStream(new ByteArrayInputStream(bytes))) {
      return in.readAllBytes();
    }
  }
}
