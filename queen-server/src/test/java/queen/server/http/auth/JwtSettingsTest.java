package queen.server.http.auth;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import com.nimbusds.jose.JWSAlgorithm;
import com.nimbusds.jose.JWSHeader;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.slf4j.LoggerFactory;
import queen.server.BrokerConfig;
import queen.server.TestBroker;
import queen.server.http.Gate;

/**
 * What the JWT settings accept at start: an algorithm named in any case, a secret long enough for
 * the algorithm it must verify, and a warning when keys are set without JWT_ENABLED.
 */
class JwtSettingsTest {
  static final String LONG_SECRET =
      "a-secret-long-enough-for-hs512-which-needs-sixty-four-bytes-..!!";

  @RegisterExtension
  static final TestBroker broker =
      new TestBroker(
          Map.of("JWT_ENABLED", "true", "JWT_SECRET", LONG_SECRET, "JWT_ALGORITHM", "hs512"));

  private static String token(JWSAlgorithm alg) {
    return Tokens.sign(
        Tokens.claims("svc", "read-only").build(), new JWSHeader(alg), Tokens.hmac(LONG_SECRET));
  }

  private static TestBroker.Reply status(String token) {
    return broker.send("GET", "/api/v1/status", null, "Authorization", "Bearer " + token);
  }

  @Test
  void anAlgorithmNamedInAnyCaseIsTheOneAccepted() {
    assertThat(LONG_SECRET.length()).isEqualTo(64);
    // before, "hs512" named no algorithm: the broker refused to start, saying no key verifies it
    assertThat(status(token(JWSAlgorithm.HS512)).status()).isEqualTo(200);
    TestBroker.Reply hs256 = status(token(JWSAlgorithm.HS256));
    assertThat(hs256.status()).isEqualTo(401);
    assertThat(hs256.json().get("error").asText()).contains("HS256", "not accepted");
  }

  @Test
  void aSecretShorterThanItsAlgorithmsHashOrAnUnknownAlgorithmStopsTheBroker() {
    String secret43 = Tokens.SECRET;
    assertThat(secret43.length()).isLessThan(48);
    // before, the broker started and answered 401 to every HS384 or HS512 token
    for (var bad : Map.of("HS384", "at least 48 bytes", "HS512", "at least 64 bytes").entrySet()) {
      assertThatThrownBy(
              () ->
                  BrokerConfig.fromEnv(
                      Map.of(
                          "JWT_ENABLED",
                          "true",
                          "JWT_SECRET",
                          secret43,
                          "JWT_ALGORITHM",
                          bad.getKey())))
          .isInstanceOf(BrokerConfig.InvalidConfigException.class)
          .hasMessageContaining("JWT_SECRET")
          .hasMessageContaining(bad.getValue());
    }
    assertThatThrownBy(
            () ->
                BrokerConfig.fromEnv(
                    Map.of(
                        "JWT_ENABLED", "true", "JWT_SECRET", secret43, "JWT_ALGORITHM", "HS999")))
        .isInstanceOf(BrokerConfig.InvalidConfigException.class)
        .hasMessageContaining("JWT_ALGORITHM HS999 is not one the broker verifies");
  }

  @Test
  void keysSetWithoutJwtEnabledAreWarnedAboutAsAnOpenBroker() {
    Logger gate = (Logger) LoggerFactory.getLogger(Gate.class);
    ListAppender<ILoggingEvent> logged = new ListAppender<>();
    logged.start();
    gate.addAppender(logged);
    try {
      // a misspelt switch: JWT_ENABLED stays false
      Gate.of(BrokerConfig.fromEnv(Map.of("JWT_SECRET", LONG_SECRET, "JWT_ENABLE", "true")).auth());
      Gate.of(BrokerConfig.fromEnv(Map.of()).auth());
    } finally {
      gate.detachAppender(logged);
    }
    assertThat(logged.list)
        .singleElement()
        .satisfies(
            e -> {
              assertThat(e.getLevel()).isEqualTo(Level.WARN);
              assertThat(e.getFormattedMessage()).contains("JWT_ENABLED", "every route is open");
            });
  }
}
