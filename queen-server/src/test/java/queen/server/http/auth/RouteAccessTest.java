package queen.server.http.auth;

import static org.assertj.core.api.Assertions.assertThat;

import com.nimbusds.jose.JWSAlgorithm;
import com.nimbusds.jose.JWSHeader;
import com.nimbusds.jose.PlainHeader;
import com.nimbusds.jose.crypto.RSASSASigner;
import com.nimbusds.jose.jwk.gen.RSAKeyGenerator;
import com.nimbusds.jwt.PlainJWT;
import java.net.http.HttpRequest;
import java.time.Duration;
import java.time.Instant;
import java.util.Date;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import queen.server.TestBroker;
import queen.server.http.RouteTable;

/**
 * With JWT_ENABLED, every declared route refuses a request without a token (401) and one whose role
 * is below the route's (403), and admits the role it declares; tokens that are malformed, unsigned,
 * badly signed, expired, for another issuer or audience, or of an algorithm not configured are 401.
 */
class RouteAccessTest {
  @RegisterExtension static final TestBroker broker = new TestBroker(Tokens.brokerEnv());

  /** A token whose roles grant exactly the level (PUBLIC: a valid token with no known role). */
  private static final Map<Access, String> TOKENS = new EnumMap<>(Access.class);

  static {
    TOKENS.put(Access.PUBLIC, Tokens.hs256("nobody", "guest"));
    TOKENS.put(Access.READ_ONLY, Tokens.hs256("viewer", "read-only"));
    TOKENS.put(Access.READ_WRITE, Tokens.hs256("svc", "read-write"));
    TOKENS.put(Access.ADMIN, Tokens.hs256("ops", "admin"));
  }

  private static String concrete(String pattern) {
    return pattern
        .replace("{partitionId}", UUID.randomUUID().toString())
        .replace("{leaseId}", UUID.randomUUID().toString())
        .replaceAll("\\{[a-zA-Z]+\\}", "x");
  }

  private int call(RouteTable.Route route, String token) {
    HttpRequest.Builder b = HttpRequest.newBuilder(broker.uri(concrete(route.path())));
    if (token != null) {
      b.header("Authorization", "Bearer " + token);
    }
    b.header("Content-Type", "application/json");
    b.method(
        route.method(),
        route.method().equals("POST")
            ? HttpRequest.BodyPublishers.ofString("{}")
            : HttpRequest.BodyPublishers.noBody());
    return broker.send(b.build()).status();
  }

  @Test
  void everyRouteRefusesAMissingTokenAndAnUnderPrivilegedOneAndAdmitsItsRole() {
    List<RouteTable.Route> routes = broker.routes();
    assertThat(routes).hasSizeGreaterThan(40);
    Map<Access, Integer> perLevel = new EnumMap<>(Access.class);
    for (RouteTable.Route r : routes) {
      perLevel.merge(r.access(), 1, Integer::sum);
      String what = r.method() + " " + r.path();
      if (r.access() == Access.PUBLIC) {
        assertThat(call(r, null)).as(what).isNotIn(401, 403);
        continue;
      }
      assertThat(call(r, null)).as(what + " without a token").isEqualTo(401);
      Access below = Access.values()[r.access().ordinal() - 1];
      assertThat(call(r, TOKENS.get(below))).as(what + " as " + below).isEqualTo(403);
      assertThat(call(r, TOKENS.get(r.access()))).as(what + " as " + r.access()).isNotIn(401, 403);
    }
    assertThat(perLevel).containsOnlyKeys(Access.values());
  }

  /** The access levels of WIRE.md section 0, written out independently of the declarations. */
  private static Access wire(String method, String path) {
    if (path.equals("/health")
        || path.startsWith("/metrics")
        || path.equals("/")
        || path.startsWith("/assets/")) {
      return Access.PUBLIC; // static dashboard files are public too
    }
    if (path.equals("/streams/v1/state/get")) {
      return Access.READ_ONLY; // a POST that only reads (WIRE.md section 17)
    }
    if (path.startsWith("/api/v1/system/")
        || path.startsWith("/internal/")
        || path.equals("/api/v1/stats/refresh")
        || (method.equals("DELETE")
            && (path.startsWith("/api/v1/consumer-groups")
                || path.startsWith("/api/v1/resources/queues/")
                || path.startsWith("/api/v1/queues/")))) {
      return Access.ADMIN;
    }
    boolean readable =
        List.of("status", "analytics", "resources", "messages", "consumer-groups", "dlq", "traces")
            .stream()
            .anyMatch(p -> path.startsWith("/api/v1/" + p));
    return method.equals("GET") && readable ? Access.READ_ONLY : Access.READ_WRITE;
  }

  @Test
  void everyRouteDeclaresTheAccessOfWireSectionZero() {
    for (RouteTable.Route r : broker.routes()) {
      assertThat(r.access()).as(r.method() + " " + r.path()).isEqualTo(wire(r.method(), r.path()));
    }
  }

  private TestBroker.Reply getStatus(String authorization) {
    HttpRequest.Builder b = HttpRequest.newBuilder(broker.uri("/api/v1/status/queues"));
    if (authorization != null) {
      b.header("Authorization", authorization);
    }
    return broker.send(b.GET().build());
  }

  @Test
  void tokensThatAreNotAcceptedAre401AndTheWayOfSendingOneIsLenient() throws Exception {
    assertThat(getStatus(null).json().get("error").asText()).isEqualTo("Authentication required");
    assertThat(getStatus(null).headers().firstValue("WWW-Authenticate")).hasValue("Bearer");
    // the header arrives trimmed: it was taken for a token named "Bearer"
    assertThat(getStatus("Bearer ").json().get("error").asText())
        .isEqualTo("Authentication required");
    Instant past = Instant.now().minus(Duration.ofMinutes(10));
    String rs256 =
        Tokens.sign(
            Tokens.claims("x", "admin").build(),
            new JWSHeader(JWSAlgorithm.RS256),
            new RSASSASigner(new RSAKeyGenerator(2048).generate()));
    Map<String, String> refused =
        Map.of(
            "malformed", "not-a-token",
            "alg none",
                new PlainJWT(new PlainHeader(), Tokens.claims("x", "admin").build()).serialize(),
            "another secret",
                Tokens.sign(
                    Tokens.claims("x", "admin").build(),
                    new JWSHeader(JWSAlgorithm.HS256),
                    Tokens.hmac("another-secret-of-at-least-thirty-two-bytes")),
            "expired",
                Tokens.hs256(
                    Tokens.claims("x", "admin")
                        .expirationTime(Date.from(past))
                        .issueTime(Date.from(past.minusSeconds(60)))
                        .build()),
            "another issuer", Tokens.hs256(Tokens.claims("x", "admin").issuer("evil").build()),
            "another audience", Tokens.hs256(Tokens.claims("x", "admin").audience("other").build()),
            "RS256 where only HS256 is configured", rs256);
    for (var e : refused.entrySet()) {
      TestBroker.Reply r = getStatus("Bearer " + e.getValue());
      assertThat(r.status()).as(e.getKey()).isEqualTo(401);
      assertThat(r.json().get("error").asText()).as(e.getKey()).startsWith("Invalid token");
    }
    String ok = TOKENS.get(Access.READ_ONLY);
    assertThat(getStatus("bearer " + ok).status()).as("prefix in any case").isEqualTo(200);
    assertThat(getStatus(ok).status()).as("a bare token").isEqualTo(200);
    String withinSkew =
        Tokens.hs256(
            Tokens.claims("x", "read-only")
                .expirationTime(Date.from(Instant.now().minusSeconds(5)))
                .build());
    assertThat(getStatus(withinSkew).status()).as("expired within the clock skew").isEqualTo(200);
    String rolesArray =
        Tokens.hs256(Tokens.claims("x", null).claim("roles", List.of("guest", "admin")).build());
    assertThat(broker.send(post("/api/v1/stats/refresh", rolesArray)).status())
        .as("the highest of a roles array")
        .isEqualTo(200);
  }

  @Test
  void skippedPathsAndPreflightNeedNoTokenAndUnknownRoutesNeedReadWrite() {
    assertThat(broker.get("/health").status()).isEqualTo(200);
    assertThat(broker.get("/metrics/prometheus").status()).isEqualTo(200);
    assertThat(
            broker
                .send(
                    HttpRequest.newBuilder(broker.uri("/api/v1/push"))
                        .method("OPTIONS", HttpRequest.BodyPublishers.noBody())
                        .build())
                .status())
        .isEqualTo(200);
    assertThat(broker.get("/api/v1/nothing-here").status()).isEqualTo(401);
    HttpRequest asReader =
        HttpRequest.newBuilder(broker.uri("/api/v1/nothing-here"))
            .header("Authorization", "Bearer " + TOKENS.get(Access.READ_ONLY))
            .GET()
            .build();
    assertThat(broker.send(asReader).status()).isEqualTo(403);
    HttpRequest asWriter =
        HttpRequest.newBuilder(broker.uri("/api/v1/nothing-here"))
            .header("Authorization", "Bearer " + TOKENS.get(Access.READ_WRITE))
            .GET()
            .build();
    assertThat(broker.send(asWriter).status()).isEqualTo(404);
  }

  private TestBroker.Reply as(String token, String method, String path, String body) {
    return broker.send(
        method, path, body, "Authorization", "Bearer " + token, "Content-Type", "application/json");
  }

  @Test
  void everyPushedMessageCarriesItsProducersSubjectAndABodyCannotSpoofIt() {
    String producer = Tokens.hs256("orders-service", "read-write");
    assertThat(
            as(
                    producer,
                    "POST",
                    "/api/v1/push",
                    "{\"items\":[{\"queue\":\"idq\",\"partition\":\"p\",\"transactionId\":\"t1\","
                        + "\"producerSub\":\"spoofed\",\"payload\":{\"n\":1}}]}")
                .status())
        .isEqualTo(201);
    assertThat(
            as(
                    producer,
                    "POST",
                    "/api/v1/transaction",
                    "{\"operations\":[{\"type\":\"push\",\"items\":[{\"queue\":\"idq\","
                        + "\"partition\":\"p\",\"transactionId\":\"t2\",\"producerSub\":\"spoofed\","
                        + "\"payload\":{\"n\":2}}]}]}")
                .json()
                .get("success")
                .asBoolean())
        .isTrue();
    var popped =
        as(producer, "GET", "/api/v1/pop/queue/idq/partition/p?batch=10&autoAck=true", null).json();
    assertThat(popped.get("messages")).hasSize(2);
    for (var m : popped.get("messages")) {
      assertThat(m.get("producerSub").asText()).isEqualTo("orders-service");
    }
    String partitionId = popped.at("/messages/0/partitionId").asText();
    assertThat(
            as(producer, "GET", "/api/v1/messages/" + partitionId + "/t1", null)
                .json()
                .get("producerSub")
                .asText())
        .isEqualTo("orders-service");
  }

  private HttpRequest post(String path, String token) {
    return HttpRequest.newBuilder(broker.uri(path))
        .header("Authorization", "Bearer " + token)
        .header("Content-Type", "application/json")
        .POST(HttpRequest.BodyPublishers.ofString("{}"))
        .build();
  }
}
