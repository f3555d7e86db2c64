package queen.server.http.auth;

import static org.assertj.core.api.Assertions.assertThat;

import com.nimbusds.jose.jwk.RSAKey;
import com.nimbusds.jose.jwk.gen.RSAKeyGenerator;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.extension.RegisterExtension;
import queen.server.TestBroker;

/**
 * An identity provider down from the broker's start, beside a PEM key: a token the broker cannot
 * check yet is a 503 every time (a 401 ends the clients' consume loops), however often nimbus's
 * rate limit refuses a fetch, and a token the PEM key verifies needs no fetch at all.
 */
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class JwksDownAtStartTest {
  static final JwksTest.Idp idp = down();
  static final RSAKey pemKey = rsa("pem");

  @RegisterExtension
  static final TestBroker broker =
      new TestBroker(
          Map.of(
              "JWT_ENABLED", "true",
              "JWT_JWKS_URL", idp.url(),
              "JWT_PUBLIC_KEY", pem(pemKey)));

  @AfterAll
  static void stop() {
    idp.server.stop(0);
  }

  @Test
  @Order(2)
  void aTokenOfTheEndpointsKeysIsUnavailableNotRefusedWhileNoKeySetWasEverFetched()
      throws Exception {
    String token = JwksTest.rs256(rsa("k1"));
    List<Integer> seen = new ArrayList<>();
    for (int i = 0; i < 5; i++) {
      seen.add(JwksTest.status(broker, token));
    }
    assertThat(seen).as("two fetches fail, the rate limit refuses the rest").containsOnly(503);
    assertThat(idp.fetches.get()).isBetween(1, 2);
  }

  // first, while a fetch is allowed: within the rate limit the old code checked the PEM key alone
  @Test
  @Order(1)
  void aTokenThePemKeyVerifiesIsAcceptedWhileTheEndpointIsDown() throws Exception {
    int fetches = idp.fetches.get();
    assertThat(JwksTest.status(broker, JwksTest.rs256(pemKey))).isEqualTo(200);
    assertThat(idp.fetches.get()).isEqualTo(fetches);
  }

  private static JwksTest.Idp down() {
    JwksTest.Idp idp = new JwksTest.Idp();
    idp.down.set(true);
    return idp;
  }

  private static RSAKey rsa(String kid) {
    try {
      return new RSAKeyGenerator(2048).keyID(kid).generate();
    } catch (com.nimbusds.jose.JOSEException e) {
      throw new IllegalStateException(e);
    }
  }

  private static String pem(RSAKey key) {
    try {
      return "-----BEGIN PUBLIC KEY-----\n"
          + Base64.getMimeEncoder().encodeToString(key.toRSAPublicKey().getEncoded())
          + "\n-----END PUBLIC KEY-----\n";
    } catch (com.nimbusds.jose.JOSEException e) {
      throw new IllegalStateException(e);
    }
  }
}
