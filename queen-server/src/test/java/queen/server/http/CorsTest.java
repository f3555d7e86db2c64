package queen.server.http;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import queen.server.BrokerConfig;
import queen.server.TestBroker;

/**
 * QUEEN_CORS_ORIGINS set to a list: pages of a listed origin, and the broker's own, may call it; a
 * request a page of another origin sends is refused before any route runs; clients that are not
 * browsers send no Origin and are served as before.
 */
class CorsTest {
  @RegisterExtension
  static final TestBroker broker =
      new TestBroker(
          Map.of("QUEEN_CORS_ORIGINS", "https://app.example.com:443, http://localhost:3000"));

  private static TestBroker.Reply from(String origin, String method, String path, String body) {
    return broker.send(method, path, body, "Origin", origin, "Content-Type", "text/plain");
  }

  @Test
  void aListedOriginIsNamedBackAndServed() {
    // listed with its default port, which browsers leave out
    TestBroker.Reply r = from("https://app.example.com", "GET", "/health", null);
    assertThat(r.status()).isEqualTo(200);
    assertThat(r.headers().firstValue("access-control-allow-origin"))
        .hasValue("https://app.example.com");
    assertThat(r.headers().firstValue("vary")).hasValue("Origin");
    TestBroker.Reply preflight = from("http://localhost:3000", "OPTIONS", "/api/v1/push", null);
    assertThat(preflight.status()).isEqualTo(200);
    assertThat(preflight.headers().firstValue("access-control-allow-methods")).isPresent();
  }

  @Test
  void aPageOfAnotherOriginIsRefusedBeforeAnyRouteRuns() {
    String push = "{\"items\":[{\"queue\":\"cors-q\",\"payload\":{\"x\":1}}]}";
    TestBroker.Reply r = from("https://evil.example", "POST", "/api/v1/push", push);
    assertThat(r.status()).isEqualTo(403);
    assertThat(r.json().get("error").asText()).contains("QUEEN_CORS_ORIGINS");
    assertThat(r.headers().firstValue("access-control-allow-origin")).isEmpty();
    assertThat(broker.sqlLong("select count(*) from queen.queues where name = 'cors-q'")).isZero();
    assertThat(from("https://evil.example", "OPTIONS", "/api/v1/push", null).status())
        .isEqualTo(403);
  }

  @Test
  void theBrokersOwnPagesAndClientsWithoutAnOriginAreServed() {
    String own = "http://127.0.0.1:" + broker.port();
    assertThat(from(own, "GET", "/api/v1/resources/queues", null).status()).isEqualTo(200);
    TestBroker.Reply plain = broker.get("/health");
    assertThat(plain.status()).isEqualTo(200);
    assertThat(plain.headers().firstValue("access-control-allow-origin")).isEmpty();
  }

  @Test
  void aValueThatIsNotAnOriginStopsTheBrokerNamingIt() {
    assertThatThrownBy(() -> BrokerConfig.fromEnv(Map.of("QUEEN_CORS_ORIGINS", "app.example.com")))
        .isInstanceOf(BrokerConfig.InvalidConfigException.class)
        .hasMessageContaining("QUEEN_CORS_ORIGINS")
        .hasMessageContaining("app.example.com");
    assertThatThrownBy(
            () -> BrokerConfig.fromEnv(Map.of("QUEEN_CORS_ORIGINS", "https://a.example/path")))
        .hasMessageContaining("not an origin");
  }
}
