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
    idp.down.set(false);
    RSAKey key = new RSAKeyGenerator(2048).keyID("k1").generate();
    idp.publish(key);
    String token = JwksTest.rs256(key);
    // fetched once nimbus's rate limit allows (two fetches per half second): the other test may
    // just have used them
    await().atMost(Duration.ofSeconds(5)).until(() -> JwksTest.status(broker, token) == 200);

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

  // the outage tolerance served the old set without saying that the fetch had failed: a 401
  @Test
  void aKeyRotatedInWhileTheEndpointIsDownIsA503NotA401() throws Exception {
    idp.down.set(false);
    RSAKey old = new RSAKeyGenerator(2048).keyID("r1").generate();
    RSAKey rotated = new RSAKeyGenerator(2048).keyID("r2").generate();
    idp.publish(old);
    String oldToken = JwksTest.rs256(old);
    String token = JwksTest.rs256(rotated);
    // fetched again once nimbus's rate limit allows (half the 1 s interval)
    await().atMost(Duration.ofSeconds(5)).until(() -> JwksTest.status(broker, oldToken) == 200);

    idp.down.set(true);
    await()
        .atMost(Duration.ofSeconds(5))
        .pollInterval(Duration.ofMillis(100))
        .until(() -> JwksTest.status(broker, token) == 503);
    assertThat(JwksTest.status(broker, oldToken))
        .as("within ten intervals of the last fetch, the keys fetched then still pass")
        .isEqualTo(200);

    idp.publish(old, rotated);
    idp.down.set(false);
    await().atMost(Duration.ofSeconds(10)).until(() -> JwksTest.status(broker, token) == 200);
  }
}
