package queen.server.http;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import queen.server.TestBroker;

/**
 * Seeded hostile input over every declared route: malformed and deeply nested JSON, invalid UTF-8,
 * NUL bytes, huge numbers, wrong types, odd headers and query strings. Every answer is 2xx or 4xx
 * (never 5xx), the broker keeps serving, and a refused request changes no row of any table.
 */
class HostileInputTest {
  private static final long SEED = 0x5eedL;
  private static final int REQUESTS = 10_000;

  /** The listener's limit on a request's header section (16 KiB, Listener). */
  private static final int MAX_HEADERS_BYTES = 16_384;

  @RegisterExtension
  static final TestBroker broker =
      // no statistics ticks or maxWait turns during the run: their rows (the turn's first claim in
      // system_state) would move under the row counts
      new TestBroker(
          Map.of(
              "QUEEN_STATS_INTERVAL_MS", "3600000",
              "QUEEN_SWEEP_INTERVAL_MS", "3600000",
              "QUEEN_MAX_PUSH_ITEMS", "50"));

  private final HttpClient http =
      HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
  private final Random random = new Random(SEED);
  private final List<String> reused = new ArrayList<>();

  private static final String[] NASTY_TEXT = {
    "",
    " ",
    "%00",
    "%C3%28",
    "%FF%FE",
    "%E2%82",
    "..",
    "%2F..%2F",
    "a%0Ab",
    "%09",
    "x".repeat(300),
    "99999999999999999999",
    "-1",
    "null",
    "true",
    "%F0%9F%92%A9",
    "%25",
    "+",
  };

  private static final String[] NASTY_JSON = {
    "",
    "{",
    "}",
    "[",
    "null",
    "true",
    "1e400",
    "-0",
    "\"\"",
    "{\"items\":",
    "{\"items\":null}",
    "{\"items\":{}}",
    "{\"items\":[1,2]}",
    "{\"items\":[{}]}",
    "{\"items\":[{\"queue\":5}]}",
    "{\"items\":[{\"queue\":\"\\u0000\"}]}",
    "{\"items\":[{\"queue\":\"q\",\"partition\":[]}]}",
    "{\"operations\":[{\"type\":\"ack\"}]}",
    "{\"operations\":\"x\"}",
    "{\"transactionId\":1}",
    "{\"partitionId\":\"not-a-uuid\",\"transactionId\":\"t\"}",
    "{\"enabled\":\"yes\"}",
    "{\"queue\":\"\",\"options\":{\"leaseTime\":1e99}}",
    "{\"timestamp\":\"tomorrow\"}",
    "{\"subscriptionTimestamp\":[]}",
    "{\"data\":1,\"transactionId\":\"t\",\"partitionId\":\"x\"}",
    "{\"a\":1}{\"b\":2}",
    "{\"a\":\"\\ud800\"}",
    "{'single':'quotes'}",
    "[1,2,3,]",
  };

  @Test
  void tenThousandHostileRequestsGetNoServerErrorAndRefusedOnesChangeNothing() throws Exception {
    List<RouteTable.Route> routes = broker.routes();
    Map<String, Integer> byClass = new TreeMap<>();
    List<String> serverErrors = new ArrayList<>();
    String tables = countQuery();
    try (Connection db = broker.connect();
        PreparedStatement count = db.prepareStatement(tables)) {
      run(routes, count, byClass, serverErrors);
    }
    System.out.println(
        "hostile input, seed "
            + SEED
            + ": "
            + byClass
            + ", resent after a closed connection: "
            + reused);
    assertThat(serverErrors).as("5xx answers").isEmpty();
    assertThat(byClass.getOrDefault("4xx", 0)).isGreaterThan(REQUESTS / 2);
    assertThat(broker.get("/health").status()).as("still serving").isEqualTo(200);
  }

  private void run(
      List<RouteTable.Route> routes,
      PreparedStatement count,
      Map<String, Integer> byClass,
      List<String> serverErrors)
      throws Exception {
    String counts = counts(count);
    for (int i = 0; i < REQUESTS; i++) {
      HttpRequest req = request(routes);
      HttpResponse<String> r;
      try {
        r = http.send(req, HttpResponse.BodyHandlers.ofString());
      } catch (java.net.http.HttpTimeoutException e) {
        throw new AssertionError("no answer in 10 s: " + req.method() + " " + req.uri(), e);
      } catch (IOException e) {
        // a kept-alive connection closed under the request: the client's own retry, once
        reused.add(req.method() + " " + req.uri() + ": " + e.getMessage());
        try {
          r = http.send(req, HttpResponse.BodyHandlers.ofString());
        } catch (IOException again) {
          if (!refusedByTheParser(req)) {
            throw new AssertionError("no answer twice: " + req.method() + " " + req.uri(), again);
          }
          // the listener answers 431 or 400 and closes without reading the rest (no lingering
          // close), so the client's TCP stack may drop that answer when the reset arrives (RFC 9112
          // 9.6)
          byClass.merge("closed", 1, Integer::sum);
          assertThat(counts(count)).as("rows after closed " + req.uri()).isEqualTo(counts);
          continue;
        }
      }
      int status = r.statusCode();
      byClass.merge(status / 100 + "xx", 1, Integer::sum);
      if (status >= 500) {
        serverErrors.add(req.method() + " " + req.uri() + " -> " + status + " " + r.body());
      }
      if (status >= 400) {
        String after = counts(count);
        assertThat(after)
            .as("rows after refused " + req.method() + " " + req.uri())
            .isEqualTo(counts);
      } else {
        counts = counts(count);
      }
    }
  }

  /**
   * Whether Jetty's parser refuses the request before any route sees it: headers over the limit, or
   * a NUL in the path (%00), which Jetty refuses whatever its URI compliance allows.
   */
  private static boolean refusedByTheParser(HttpRequest req) {
    return req.headers().firstValue("X-Padding").orElse("").length() > MAX_HEADERS_BYTES - 1024
        || req.uri().getRawPath().contains("%00");
  }

  private HttpRequest request(List<RouteTable.Route> routes) {
    RouteTable.Route route = routes.get(random.nextInt(routes.size()));
    String method = random.nextInt(20) == 0 ? pick("GET", "POST", "DELETE", "PUT") : route.method();
    StringBuilder path = new StringBuilder();
    for (String part : route.path().split("/")) {
      if (part.isEmpty()) {
        continue;
      }
      path.append('/');
      path.append(part.startsWith("{") ? pathValue() : part);
    }
    if (random.nextInt(30) == 0) {
      path.append("/extra");
    }
    String uri = "http://127.0.0.1:" + broker.port() + path + query();
    HttpRequest.Builder b;
    try {
      b = HttpRequest.newBuilder(URI.create(uri));
    } catch (IllegalArgumentException e) {
      b = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + broker.port() + "/api/v1/x%25"));
    }
    b.timeout(Duration.ofSeconds(10));
    if (random.nextBoolean()) {
      b.header(
          "Content-Type",
          pick("application/json", "text/plain", "application/json; charset=latin1"));
    }
    if (random.nextInt(50) == 0) {
      b.header("X-Padding", randomAscii(1 + random.nextInt(20_000)).trim() + "x");
    }
    if (random.nextInt(10) == 0) {
      b.header("Authorization", pick("Bearer", "Bearer x.y.z", "Basic Zm9vOmJhcg=="));
    }
    byte[] body =
        method.equals("GET") || method.equals("DELETE") && random.nextBoolean()
            ? new byte[0]
            : body();
    return b.method(method, HttpRequest.BodyPublishers.ofByteArray(body)).build();
  }

  private String pathValue() {
    return switch (random.nextInt(4)) {
      case 0 -> pick(NASTY_TEXT);
      case 1 -> java.util.UUID.randomUUID().toString();
      case 2 -> "q" + random.nextInt(5);
      default ->
          randomAscii(1 + random.nextInt(40))
              .replaceAll("[^A-Za-z0-9._-]", "%2" + random.nextInt(10));
    };
  }

  private String query() {
    int n = random.nextInt(4);
    StringBuilder q = new StringBuilder();
    for (int i = 0; i < n; i++) {
      q.append(i == 0 ? '?' : '&');
      String key =
          pick(
              "batch",
              "wait",
              "timeout",
              "autoAck",
              "limit",
              "offset",
              "from",
              "to",
              "consumerGroup",
              "partition",
              "queue",
              "status",
              "interval",
              "deleteMetadata",
              "subscriptionMode",
              "subscriptionFrom",
              "partitions",
              "minLagSeconds");
      q.append(key).append('=');
      if (key.equals("wait")) {
        q.append(pick("maybe", "", "false", "0", "%00", "yes")); // a long poll would only idle
      } else {
        q.append(random.nextBoolean() ? pick(NASTY_TEXT) : Integer.toString(random.nextInt()));
      }
    }
    return q.toString();
  }

  private byte[] body() {
    return switch (random.nextInt(6)) {
      case 0 -> pick(NASTY_JSON).getBytes(StandardCharsets.UTF_8);
      case 1 -> nested(1 + random.nextInt(5000));
      case 2 -> {
        byte[] raw = new byte[random.nextInt(200)];
        random.nextBytes(raw);
        yield raw;
      }
      case 3 ->
          ("{\"items\":[{\"queue\":\""
                  + pick("q0", "", " ", "\u0001")
                  + "\",\"payload\":"
                  + pick(
                      "1e400",
                      "{\"a\":\"\u0000\"}",
                      "[[[[[]]]]]",
                      "\"\\uDFFF\"",
                      "99999999999999999999999")
                  + ",\"traceId\":\""
                  + pick("x", "", "00000000-0000-0000-0000-000000000000")
                  + "\"}]}")
              .getBytes(StandardCharsets.UTF_8);
      case 4 -> {
        byte[] valid = pick(NASTY_JSON).getBytes(StandardCharsets.UTF_8);
        if (valid.length > 0) {
          valid[random.nextInt(valid.length)] = (byte) (0x80 + random.nextInt(0x80));
        }
        yield valid;
      }
      default ->
          ("{\""
                  + pick("queue", "items", "operations", "enabled", "transactionId")
                  + "\":"
                  + pick("{}", "[]", "\"\"", "0", "-9223372036854775809", "true")
                  + "}")
              .getBytes(StandardCharsets.UTF_8);
    };
  }

  private byte[] nested(int depth) {
    String open = random.nextBoolean() ? "[" : "{\"a\":";
    String close = open.equals("[") ? "]" : "}";
    return (open.repeat(depth) + "1" + close.repeat(depth)).getBytes(StandardCharsets.UTF_8);
  }

  private String randomAscii(int n) {
    StringBuilder s = new StringBuilder();
    for (int i = 0; i < n; i++) {
      s.append((char) (32 + random.nextInt(95)));
    }
    return s.toString();
  }

  @SafeVarargs
  private <T> T pick(T... options) {
    return options[random.nextInt(options.length)];
  }

  /** One query counting the rows of every table of the schema but the statistics'. */
  private static String countQuery() throws Exception {
    List<String> parts = new ArrayList<>();
    try (Connection c = broker.connect();
        Statement st = c.createStatement();
        ResultSet rs =
            st.executeQuery(
                "select tablename from pg_tables where schemaname = 'queen'"
                    + " and tablename not like '%stats%' and tablename not like 'flyway%'"
                    + " order by tablename")) {
      while (rs.next()) {
        parts.add(
            "'" + rs.getString(1) + "=' || (select count(*) from queen." + rs.getString(1) + ")");
      }
    }
    return "select " + String.join(" || ' ' || ", parts);
  }

  private static String counts(PreparedStatement count) throws SQLException {
    try (ResultSet rs = count.executeQuery()) {
      rs.next();
      return rs.getString(1);
    }
  }
}
