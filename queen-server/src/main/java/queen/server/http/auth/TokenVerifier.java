package queen.server.http.auth;

import com.nimbusds.jose.JOSEException;
import com.nimbusds.jose.JWSAlgorithm;
import com.nimbusds.jose.JWSHeader;
import com.nimbusds.jose.JWSVerifier;
import com.nimbusds.jose.crypto.MACVerifier;
import com.nimbusds.jose.crypto.RSASSAVerifier;
import com.nimbusds.jose.proc.SecurityContext;
import com.nimbusds.jwt.JWTClaimsSet;
import com.nimbusds.jwt.SignedJWT;
import com.nimbusds.jwt.proc.BadJWTException;
import com.nimbusds.jwt.proc.DefaultJWTClaimsVerifier;
import java.nio.charset.StandardCharsets;
import java.security.PublicKey;
import java.security.interfaces.RSAPublicKey;
import java.text.ParseException;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Checks bearer tokens with nimbus-jose-jwt: the header's algorithm must be one the configured keys
 * verify (so {@code alg: none}, and an HS token where only RSA or Ed25519 keys are configured, are
 * refused before any signature is computed), the signature must verify with a key of that kind
 * (chosen by {@code kid} from a JWKS), and {@code exp}, {@code nbf}, {@code iss} and {@code aud}
 * must hold within the clock skew. The caller's access is the highest its role claims name.
 */
public final class TokenVerifier {
  /**
   * Each HMAC algorithm with the shortest secret it verifies with (RFC 7518 3.2: its hash size).
   */
  private static final Map<JWSAlgorithm, Integer> HMAC =
      Map.of(JWSAlgorithm.HS256, 32, JWSAlgorithm.HS384, 48, JWSAlgorithm.HS512, 64);

  private static final Set<JWSAlgorithm> RSA =
      Set.of(
          JWSAlgorithm.RS256,
          JWSAlgorithm.RS384,
          JWSAlgorithm.RS512,
          JWSAlgorithm.PS256,
          JWSAlgorithm.PS384,
          JWSAlgorithm.PS512);
  private static final Set<JWSAlgorithm> EDDSA = Set.of(JWSAlgorithm.EdDSA, JWSAlgorithm.Ed25519);

  private final AuthSettings settings;
  private final MACVerifier mac;
  private final PublicKeys keys;
  private final Set<JWSAlgorithm> accepted;
  private final DefaultJWTClaimsVerifier<SecurityContext> claims;

  private TokenVerifier(
      AuthSettings settings, MACVerifier mac, int secretBytes, PublicKeys keys, JWSAlgorithm only) {
    this.settings = settings;
    this.mac = mac;
    this.keys = keys;
    Set<JWSAlgorithm> algs = new HashSet<>();
    if (mac != null) {
      // a secret shorter than an algorithm's hash never verifies its tokens
      HMAC.forEach(
          (alg, least) -> {
            if (secretBytes >= least) {
              algs.add(alg);
            }
          });
    }
    if (keys.rsa()) {
      algs.addAll(RSA);
    }
    if (keys.ed25519()) {
      algs.addAll(EDDSA);
    }
    if (only != null) {
      algs.retainAll(Set.of(only));
    }
    this.accepted = Set.copyOf(algs);
    JWTClaimsSet exact =
        settings.issuer() == null
            ? null
            : new JWTClaimsSet.Builder().issuer(settings.issuer()).build();
    this.claims =
        new DefaultJWTClaimsVerifier<>(
            settings.audience() == null ? null : Set.of(settings.audience()),
            exact,
            Set.of(),
            Set.of());
    this.claims.setMaxClockSkew((int) settings.clockSkew().toSeconds());
  }

  /**
   * A verifier for the settings, or an {@link IllegalArgumentException} naming the variable that
   * makes it impossible (no key, a short secret, an unreadable key, an algorithm no key verifies).
   */
  public static TokenVerifier create(AuthSettings s) {
    JWSAlgorithm only = s.algorithm() == null ? null : named(s.algorithm());
    MACVerifier mac = null;
    int secretBytes = 0;
    if (s.secret() != null) {
      byte[] secret = s.secret().getBytes(StandardCharsets.UTF_8);
      secretBytes = secret.length;
      int least = only == null ? 32 : HMAC.getOrDefault(only, 32);
      if (secret.length < least) {
        throw new IllegalArgumentException(
            "JWT_SECRET must be at least "
                + least
                + " bytes ("
                + (only != null && HMAC.containsKey(only) ? only : JWSAlgorithm.HS256)
                + " needs a "
                + least * 8
                + "-bit key), got "
                + secret.length);
      }
      try {
        mac = new MACVerifier(secret);
      } catch (JOSEException e) {
        throw new IllegalArgumentException("JWT_SECRET: " + e.getMessage(), e);
      }
    }
    PublicKeys keys = PublicKeys.of(s);
    if (mac == null && !keys.rsa() && !keys.ed25519()) {
      throw new IllegalArgumentException(
          "JWT_ENABLED=true needs JWT_SECRET, JWT_PUBLIC_KEY or JWT_JWKS_URL");
    }
    TokenVerifier v = new TokenVerifier(s, mac, secretBytes, keys, only);
    if (v.accepted.isEmpty()) {
      throw new IllegalArgumentException(
          "JWT_ALGORITHM " + s.algorithm() + " cannot be verified with the configured keys");
    }
    return v;
  }

  /** The algorithm JWT_ALGORITHM names, in any case, among those the broker verifies. */
  private static JWSAlgorithm named(String name) {
    Set<JWSAlgorithm> known = new HashSet<>(HMAC.keySet());
    known.addAll(RSA);
    known.addAll(EDDSA);
    return known.stream()
        .filter(a -> a.getName().equalsIgnoreCase(name))
        .findFirst()
        .orElseThrow(
            () ->
                new IllegalArgumentException(
                    "JWT_ALGORITHM "
                        + name
                        + " is not one the broker verifies: "
                        + known.stream().map(JWSAlgorithm::getName).sorted().toList()));
  }

  /** The caller a token names, or an {@link AuthFailure} saying why it is not accepted. */
  public Caller verify(String token) {
    SignedJWT jwt;
    try {
      jwt = SignedJWT.parse(token);
    } catch (ParseException e) {
      throw new AuthFailure("Invalid token: not a signed JWT");
    }
    JWSHeader header = jwt.getHeader();
    if (!accepted.contains(header.getAlgorithm())) {
      throw new AuthFailure("Invalid token: algorithm " + header.getAlgorithm() + " not accepted");
    }
    if (header.getCriticalParams() != null && !header.getCriticalParams().isEmpty()) {
      // RFC 7515 4.1.11: extensions the issuer marks critical must be understood, and none is
      throw new AuthFailure(
          "Invalid token: critical header parameters not understood: "
              + header.getCriticalParams());
    }
    if (!signed(jwt, header)) {
      throw new AuthFailure("Invalid token: signature does not verify");
    }
    JWTClaimsSet set;
    try {
      set = jwt.getJWTClaimsSet();
      claims.verify(set, null);
    } catch (ParseException e) {
      throw new AuthFailure("Invalid token: unreadable claims");
    } catch (BadJWTException e) {
      throw new AuthFailure("Invalid token: " + e.getMessage());
    }
    return new Caller(set.getSubject(), access(set));
  }

  /**
   * Whether a key the token may name verifies it: the secret, else JWT_PUBLIC_KEY, else the JWKS's
   * keys, fetched only then (a token the PEM key verifies is accepted while the identity provider
   * is down).
   */
  private boolean signed(SignedJWT jwt, JWSHeader header) {
    JWSAlgorithm alg = header.getAlgorithm();
    if (HMAC.containsKey(alg)) {
      return signatureHolds(jwt, List.of(mac));
    }
    boolean rsa = RSA.contains(alg);
    PublicKey pem = keys.pem(rsa);
    if (pem != null && signatureHolds(jwt, List.of(verifier(pem, rsa)))) {
      return true;
    }
    List<JWSVerifier> out = new ArrayList<>();
    for (PublicKey k :
        rsa ? keys.rsaKeys(header.getKeyID(), alg) : keys.ed25519Keys(header.getKeyID())) {
      out.add(verifier(k, rsa));
    }
    return signatureHolds(jwt, out);
  }

  private static JWSVerifier verifier(PublicKey key, boolean rsa) {
    return rsa ? new RSASSAVerifier((RSAPublicKey) key) : new Ed25519Verifier(key);
  }

  private static boolean signatureHolds(SignedJWT jwt, List<JWSVerifier> verifiers) {
    for (JWSVerifier v : verifiers) {
      try {
        if (jwt.verify(v)) {
          return true;
        }
      } catch (JOSEException e) {
        // a key of the wrong size for this signature: try the next one
      }
    }
    return false;
  }

  private Access access(JWTClaimsSet set) {
    List<String> roles = new ArrayList<>();
    Object one = set.getClaim(settings.roleClaim());
    if (one instanceof String s) {
      roles.add(s);
    }
    if (set.getClaim(settings.rolesClaim()) instanceof List<?> many) {
      for (Object r : many) {
        if (r instanceof String s) {
          roles.add(s);
        }
      }
    }
    Access best = Access.PUBLIC;
    for (String r : roles) {
      Access a =
          r.equals(settings.adminRole())
              ? Access.ADMIN
              : r.equals(settings.readWriteRole())
                  ? Access.READ_WRITE
                  : r.equals(settings.readOnlyRole()) ? Access.READ_ONLY : Access.PUBLIC;
      if (a.grants(best)) {
        best = a;
      }
    }
    return best;
  }
}
