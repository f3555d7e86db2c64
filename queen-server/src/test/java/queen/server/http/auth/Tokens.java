package queen.server.http.auth;

import com.nimbusds.jose.JOSEException;
import com.nimbusds.jose.JWSAlgorithm;
import com.nimbusds.jose.JWSHeader;
import com.nimbusds.jose.JWSSigner;
import com.nimbusds.jose.crypto.MACSigner;
import com.nimbusds.jose.util.Base64URL;
import com.nimbusds.jwt.JWTClaimsSet;
import com.nimbusds.jwt.SignedJWT;
import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.PrivateKey;
import java.security.Signature;
import java.time.Duration;
import java.time.Instant;
import java.util.Date;
import java.util.HashMap;
import java.util.Map;

/** Tokens for tests, signed the way identity providers sign them. */
public final class Tokens {
  public static final String SECRET = "a-test-secret-of-at-least-thirty-two-bytes!";
  public static final String ISSUER = "queen-test";
  public static final String AUDIENCE = "queen";

  private Tokens() {}

  /** A broker's settings that verify these tokens, and {@code more} (name, value, ...). */
  public static Map<String, String> brokerEnv(String... more) {
    Map<String, String> env = new HashMap<>();
    env.put("JWT_ENABLED", "true");
    env.put("JWT_SECRET", SECRET);
    env.put("JWT_ISSUER", ISSUER);
    env.put("JWT_AUDIENCE", AUDIENCE);
    for (int i = 0; i < more.length; i += 2) {
      env.put(more[i], more[i + 1]);
    }
    return env;
  }

  /** Claims valid for five minutes, with the test issuer and audience. */
  public static JWTClaimsSet.Builder claims(String subject, String role) {
    Instant now = Instant.now();
    JWTClaimsSet.Builder b =
        new JWTClaimsSet.Builder()
            .subject(subject)
            .issuer(ISSUER)
            .audience(AUDIENCE)
            .issueTime(Date.from(now))
            .expirationTime(Date.from(now.plus(Duration.ofMinutes(5))));
    return role == null ? b : b.claim("role", role);
  }

  public static String hs256(JWTClaimsSet claims) {
    return sign(claims, new JWSHeader(JWSAlgorithm.HS256), hmac(SECRET));
  }

  public static String hs256(String subject, String role) {
    return hs256(claims(subject, role).build());
  }

  public static JWSSigner hmac(String secret) {
    try {
      return new MACSigner(secret.getBytes(StandardCharsets.UTF_8));
    } catch (JOSEException e) {
      throw new IllegalStateException(e);
    }
  }

  public static String sign(JWTClaimsSet claims, JWSHeader header, JWSSigner signer) {
    SignedJWT jwt = new SignedJWT(header, claims);
    try {
      jwt.sign(signer);
    } catch (JOSEException e) {
      throw new IllegalStateException(e);
    }
    return jwt.serialize();
  }

  /** An EdDSA token signed with the JDK's Ed25519 (nimbus's signer needs Tink). */
  public static String eddsa(JWTClaimsSet claims, String kid, PrivateKey key) {
    JWSHeader header = new JWSHeader.Builder(JWSAlgorithm.EdDSA).keyID(kid).build();
    String input = header.toBase64URL() + "." + Base64URL.encode(claims.toString());
    try {
      Signature s = Signature.getInstance("Ed25519");
      s.initSign(key);
      s.update(input.getBytes(StandardCharsets.US_ASCII));
      return input + "." + Base64URL.encode(s.sign());
    } catch (GeneralSecurityException e) {
      throw new IllegalStateException(e);
    }
  }
}
