package queen.server.http.auth;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.nimbusds.jose.jwk.RSAKey;
import com.nimbusds.jose.jwk.gen.RSAKeyGenerator;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import queen.server.TestBroker;

/**
 * An identity provider that goes down after the broker fetched its keys: tokens signed by those
 * keys stay accepted after the keys' refresh interval, while every fetch fails (a 401 would end the
 * clients' consume loops). A refresh interval under nimbus's 30 s rate limit starts.
 */
class JwksOutageTest {
  static final JwksTest.Idp idp = new JwksTest.Idp();

  @RegisterExtension
  static final TestBroker broker =
      new TestBroker(
          Map.of(
              "JWT_ENABLED", "true",
              "JWT_JWKS_URL", idp.url(),
              "JWT_JWKS_REFRESH_INTERVAL", "1"));

  @AfterAll
  static void stop() {
    idp.server.stop(0);
  }

  @Test
  void knownKeysOutliveTheirRefreshWhileTheEndpointIsDown() throws Exception {
    RSAKey key = new RSAKeyGenerator(2048).keyID("k1").generate();
    idp.publish(key);
    String token = JwksTest.rs256(key);
    assertThat(JwksTest.status(broker, token)).isEqualTo(200);

    idp.down.set(true);
    int before = idp.fetches.get();
    List<Integer> seen = new ArrayList<>();
    // the cache lives 1 s: two failed fetches mean it expired and was refused a refresh twice
    await()
        .atMost(Duration.ofSeconds(20))
        .pollInterval(Duration.ofMillis(100))
        .until(
            () -> {
              seen.add(JwksTest.status(broker, token));
              return idp.fetches.get() >= before + 2;
            });
    seen.add(JwksTest.status(broker, token));
    assertThat(seen).as("answers while the endpoint was down").containsOnly(200);
  }
}
