package queen.server.http.auth;

import static org.assertj.core.api.Assertions.assertThat;

import com.nimbusds.jose.JWSAlgorithm;
import com.nimbusds.jose.JWSHeader;
import com.nimbusds.jose.crypto.RSASSASigner;
import com.nimbusds.jose.jwk.KeyUse;
import com.nimbusds.jose.jwk.RSAKey;
import com.nimbusds.jose.jwk.gen.RSAKeyGenerator;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import queen.server.TestBroker;

/**
 * Which keys of a JWKS endpoint may verify a token: those published for signatures (or for no use
 * in particular) and for the token's algorithm (or for none); and a token whose header marks an
 * extension critical is refused, since the broker understands none (RFC 7515 4.1.11).
 */
class JwksKeyChoiceTest {
  static final JwksTest.Idp idp = new JwksTest.Idp();

  @RegisterExtension
  static final TestBroker broker =
      new TestBroker(Map.of("JWT_ENABLED", "true", "JWT_JWKS_URL", idp.url()));

  @AfterAll
  static void stop() {
    idp.server.stop(0);
  }

  @Test
  void keysForEncryptionOrAnotherAlgorithmAndUnknownCriticalHeadersVerifyNothing()
      throws Exception {
    RSAKey signing = new RSAKeyGenerator(2048).keyID("sig").keyUse(KeyUse.SIGNATURE).generate();
    RSAKey encrypting = new RSAKeyGenerator(2048).keyID("enc").keyUse(KeyUse.ENCRYPTION).generate();
    RSAKey pinned = new RSAKeyGenerator(2048).keyID("ps").algorithm(JWSAlgorithm.PS256).generate();
    idp.publish(signing, encrypting, pinned);
    assertThat(JwksTest.status(broker, JwksTest.rs256(signing))).isEqualTo(200);
    assertThat(JwksTest.status(broker, JwksTest.rs256(encrypting)))
        .as("a key published for encryption")
        .isEqualTo(401);
    assertThat(JwksTest.status(broker, JwksTest.rs256(pinned)))
        .as("a key published for PS256 only")
        .isEqualTo(401);
    String critical =
        Tokens.sign(
            Tokens.claims("svc", "read-only").build(),
            new JWSHeader.Builder(JWSAlgorithm.RS256)
                .keyID("sig")
                .criticalParams(Set.of("acme-policy"))
                .customParam("acme-policy", "strict")
                .build(),
            new RSASSASigner(signing));
    assertThat(JwksTest.status(broker, critical))
        .as("a critical extension the broker cannot honour")
        .isEqualTo(401);
  }
}
