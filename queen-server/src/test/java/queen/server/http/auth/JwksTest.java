package queen.server.http.auth;

import static org.assertj.core.api.Assertions.assertThat;

import com.nimbusds.jose.JWSAlgorithm;
import com.nimbusds.jose.JWSHeader;
import com.nimbusds.jose.crypto.RSASSASigner;
import com.nimbusds.jose.jwk.Curve;
import com.nimbusds.jose.jwk.JWK;
import com.nimbusds.jose.jwk.JWKSet;
import com.nimbusds.jose.jwk.OctetKeyPair;
import com.nimbusds.jose.jwk.RSAKey;
import com.nimbusds.jose.jwk.gen.RSAKeyGenerator;
import com.nimbusds.jose.util.Base64URL;
import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.http.HttpRequest;
import java.nio.charset.StandardCharsets;
import java.security.KeyPair;
import java.security.KeyPairGenerator;
import java.security.NoSuchAlgorithmException;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import queen.server.TestBroker;

/**
 * RS256 and EdDSA tokens checked against the keys of a JWKS endpoint (a real HTTP server here),
 * chosen by {@code kid}; a key rotated at the endpoint is accepted without a restart and a key
 * removed there stops being accepted.
 */
class JwksTest {
  static final Idp idp = new Idp();

  @RegisterExtension
  static final TestBroker broker =
      new TestBroker(Map.of("JWT_ENABLED", "true", "JWT_JWKS_URL", idp.url()));

  @AfterAll
  static void stop() {
    idp.server.stop(0);
  }

  /** A JWKS endpoint whose key set the test replaces, counting fetches; it can be taken down. */
  static final class Idp {
    final HttpServer server;
    final AtomicReference<JWKSet> keys = new AtomicReference<>(new JWKSet());
    final AtomicInteger fetches = new AtomicInteger();
    final AtomicBoolean down = new AtomicBoolean();

    Idp() {
      try {
        server = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
      } catch (IOException e) {
        throw new IllegalStateException(e);
      }
      server.createContext(
          "/jwks",
          exchange -> {
            fetches.incrementAndGet();
            if (down.get()) {
              exchange.sendResponseHeaders(503, -1);
              exchange.close();
              return;
            }
            byte[] body = keys.get().toString(true).getBytes(StandardCharsets.UTF_8);
            exchange.getResponseHeaders().add("Content-Type", "application/json");
            exchange.sendResponseHeaders(200, body.length);
            try (OutputStream out = exchange.getResponseBody()) {
              out.write(body);
            }
          });
      server.start();
    }

    String url() {
      return "http://127.0.0.1:" + server.getAddress().getPort() + "/jwks";
    }

    void publish(JWK... jwks) {
      keys.set(new JWKSet(Arrays.stream(jwks).map(JWK::toPublicJWK).toList()));
    }
  }

  static int status(TestBroker broker, String token) {
    return broker
        .send(
            HttpRequest.newBuilder(broker.uri("/api/v1/status/queues"))
                .header("Authorization", "Bearer " + token)
                .GET()
                .build())
        .status();
  }

  private static int status(String token) {
    return status(broker, token);
  }

  static String rs256(RSAKey key) throws Exception {
    return Tokens.sign(
        Tokens.claims("svc", "read-only").build(),
        new JWSHeader.Builder(JWSAlgorithm.RS256).keyID(key.getKeyID()).build(),
        new RSASSASigner(key));
  }

  @Test
  void tokensAreCheckedAgainstTheEndpointsKeysByKidAndRotationNeedsNoRestart() throws Exception {
    RSAKey first = new RSAKeyGenerator(2048).keyID("k1").generate();
    KeyPair ed = ed25519();
    byte[] spki = ed.getPublic().getEncoded();
    OctetKeyPair edJwk =
        new OctetKeyPair.Builder(
                Curve.Ed25519,
                Base64URL.encode(Arrays.copyOfRange(spki, spki.length - 32, spki.length)))
            .keyID("e1")
            .build();
    idp.publish(first, edJwk);

    assertThat(status(rs256(first))).as("RS256 by kid").isEqualTo(200);
    String eddsa = Tokens.eddsa(Tokens.claims("svc", "read-only").build(), "e1", ed.getPrivate());
    assertThat(status(eddsa)).as("EdDSA by kid").isEqualTo(200);
    assertThat(status(eddsa.substring(0, eddsa.length() - 4) + "AAAA"))
        .as("EdDSA with a broken signature")
        .isEqualTo(401);
    assertThat(status(Tokens.hs256("svc", "read-only")))
        .as("HS256 where only public keys are configured")
        .isEqualTo(401);
    int fetched = idp.fetches.get();

    RSAKey second = new RSAKeyGenerator(2048).keyID("k2").generate();
    idp.publish(second, edJwk);
    assertThat(status(rs256(second))).as("a key rotated in at the endpoint").isEqualTo(200);
    assertThat(idp.fetches.get()).as("fetched again for the unknown kid").isGreaterThan(fetched);
    assertThat(status(rs256(first))).as("a key rotated out").isEqualTo(401);
    RSAKey impostor = new RSAKeyGenerator(2048).keyID("k2").generate();
    assertThat(status(rs256(impostor))).as("the right kid, another key").isEqualTo(401);
  }

  private static KeyPair ed25519() throws NoSuchAlgorithmException {
    return KeyPairGenerator.getInstance("Ed25519").generateKeyPair();
  }

  @Test
  void aPemPublicKeyIsAcceptedForRsaAndEd25519() throws Exception {
    RSAKey rsa = new RSAKeyGenerator(2048).generate();
    KeyPair ed = ed25519();
    for (var c :
        List.of(Map.entry("RSA", rsa.toPublicKey()), Map.entry("Ed25519", ed.getPublic()))) {
      String pem =
          "-----BEGIN PUBLIC KEY-----\n"
              + java.util.Base64.getMimeEncoder().encodeToString(c.getValue().getEncoded())
              + "\n-----END PUBLIC KEY-----\n";
      AuthSettings s = AuthSettings.disabled();
      TokenVerifier v =
          TokenVerifier.create(
              new AuthSettings(
                  true,
                  null,
                  null,
                  pem,
                  null,
                  s.jwksRefresh(),
                  s.jwksTimeout(),
                  null,
                  null,
                  s.clockSkew(),
                  s.skipPaths(),
                  "role",
                  "roles",
                  "admin",
                  "read-write",
                  "read-only"));
      String token =
          c.getKey().equals("RSA")
              ? Tokens.sign(
                  Tokens.claims("pem", "admin").build(),
                  new JWSHeader(JWSAlgorithm.RS256),
                  new RSASSASigner(rsa))
              : Tokens.eddsa(Tokens.claims("pem", "admin").build(), null, ed.getPrivate());
      assertThat(v.verify(token)).as(c.getKey()).isEqualTo(new Caller("pem", Access.ADMIN));
    }
  }
}
