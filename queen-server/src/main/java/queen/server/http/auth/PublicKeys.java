package queen.server.http.auth;

import com.nimbusds.jose.Algorithm;
import com.nimbusds.jose.JWSAlgorithm;
import com.nimbusds.jose.KeySourceException;
import com.nimbusds.jose.jwk.Curve;
import com.nimbusds.jose.jwk.JWK;
import com.nimbusds.jose.jwk.JWKMatcher;
import com.nimbusds.jose.jwk.JWKSelector;
import com.nimbusds.jose.jwk.JWKSet;
import com.nimbusds.jose.jwk.KeyType;
import com.nimbusds.jose.jwk.KeyUse;
import com.nimbusds.jose.jwk.OctetKeyPair;
import com.nimbusds.jose.jwk.RSAKey;
import com.nimbusds.jose.jwk.source.JWKSetCacheRefreshEvaluator;
import com.nimbusds.jose.jwk.source.JWKSetSource;
import com.nimbusds.jose.jwk.source.JWKSource;
import com.nimbusds.jose.jwk.source.JWKSourceBuilder;
import com.nimbusds.jose.jwk.source.RateLimitReachedException;
import com.nimbusds.jose.jwk.source.URLBasedJWKSetSource;
import com.nimbusds.jose.proc.SecurityContext;
import com.nimbusds.jose.util.DefaultResourceRetriever;
import java.net.MalformedURLException;
import java.net.URL;
import java.security.GeneralSecurityException;
import java.security.KeyFactory;
import java.security.PublicKey;
import java.security.interfaces.RSAPublicKey;
import java.security.spec.X509EncodedKeySpec;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Base64;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.atomic.AtomicBoolean;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The public keys tokens are checked against: one PEM key (RSA or Ed25519) from JWT_PUBLIC_KEY, and
 * the keys of a JWKS endpoint, fetched when first needed, kept for the refresh interval and fetched
 * again at once (rate-limited by nimbus) when a token names a {@code kid} not in the set, so a key
 * rotated at the endpoint is picked up without a restart. While the endpoint is down the keys last
 * fetched stay in use for ten refresh intervals: an identity provider's outage must not turn every
 * token into a 401, which the clients take as fatal.
 */
final class PublicKeys {
  private static final Logger log = LoggerFactory.getLogger(PublicKeys.class);
  private static final int JWKS_SIZE_LIMIT = 1 << 20;

  private final PublicKey pem;
  private final JWKSource<SecurityContext> jwks;
  private final Endpoint endpoint;

  private PublicKeys(PublicKey pem, JWKSource<SecurityContext> jwks, Endpoint endpoint) {
    this.pem = pem;
    this.jwks = jwks;
    this.endpoint = endpoint;
  }

  static PublicKeys of(AuthSettings s) {
    PublicKey pem = s.publicKeyPem() == null ? null : parsePem(s.publicKeyPem());
    JWKSource<SecurityContext> jwks = null;
    Endpoint endpoint = null;
    if (s.jwksUrl() != null) {
      int timeout = (int) s.jwksTimeout().toMillis();
      long refresh = s.jwksRefresh().toMillis();
      URL url;
      try {
        url = s.jwksUrl().toURL();
      } catch (MalformedURLException | IllegalArgumentException e) {
        throw new IllegalArgumentException("JWT_JWKS_URL is not a URL: " + s.jwksUrl(), e);
      }
      if ("http".equalsIgnoreCase(url.getProtocol())) {
        // who can change that traffic serves keys of their own and signs any role's token
        log.warn(
            "JWT_JWKS_URL {} is plain http: the keys it serves decide every token; use https"
                + " unless the path to it is trusted",
            url);
      }
      endpoint =
          new Endpoint(
              new URLBasedJWKSetSource<>(
                  url, new DefaultResourceRetriever(timeout, timeout, JWKS_SIZE_LIMIT)));
      jwks =
          JWKSourceBuilder.create(endpoint)
              .cache(refresh, timeout)
              // fetched ahead of expiry in the background when the interval leaves room for it
              .refreshAheadCache(refresh > JWKSourceBuilder.DEFAULT_REFRESH_AHEAD_TIME + timeout)
              .rateLimited(rateLimit(refresh))
              .outageTolerant(true)
              .build();
    }
    return new PublicKeys(pem, jwks, endpoint);
  }

  /**
   * At most two fetches per this many milliseconds: nimbus's 30 s, or half a shorter refresh
   * interval (it refuses a rate limit as long as the cache's life).
   */
  private static long rateLimit(long refreshMillis) {
    return Math.min(JWKSourceBuilder.DEFAULT_RATE_LIMIT_MIN_INTERVAL, refreshMillis / 2);
  }

  boolean rsa() {
    return jwks != null || pem instanceof RSAPublicKey;
  }

  boolean ed25519() {
    return jwks != null || (pem != null && !(pem instanceof RSAPublicKey));
  }

  /**
   * The JWKS keys a token of this {@code kid} (null: any) and algorithm may name: of the type,
   * published for signatures or for no use in particular, and for this algorithm or for none. A key
   * published for encryption, or pinned to another algorithm, verifies nothing.
   */
  private static JWKMatcher.Builder signing(KeyType type, String kid, JWSAlgorithm... algs) {
    Set<Algorithm> any = new HashSet<>(Arrays.asList(algs));
    any.add(null);
    return new JWKMatcher.Builder()
        .keyType(type)
        .keyID(kid)
        .keyUses(KeyUse.SIGNATURE, null)
        .algorithms(any);
  }

  /** JWT_PUBLIC_KEY when it is of the kind asked for (RSA, else Ed25519), else null. */
  PublicKey pem(boolean rsa) {
    return pem != null && (pem instanceof RSAPublicKey) == rsa ? pem : null;
  }

  /** The JWKS's RSA keys that may have signed a token with this {@code kid} (null: any). */
  List<PublicKey> rsaKeys(String kid, JWSAlgorithm alg) {
    List<PublicKey> out = new ArrayList<>();
    for (JWK k : fetch(signing(KeyType.RSA, kid, alg).build())) {
      try {
        out.add(((RSAKey) k).toRSAPublicKey());
      } catch (com.nimbusds.jose.JOSEException e) {
        log.warn("JWKS key {} is not a usable RSA key: {}", k.getKeyID(), e.getMessage());
      }
    }
    return out;
  }

  /** The JWKS's Ed25519 keys that may have signed a token with this {@code kid} (null: any). */
  List<PublicKey> ed25519Keys(String kid) {
    List<PublicKey> out = new ArrayList<>();
    // EdDSA and its newer name for this curve (RFC 9864) are one algorithm here
    JWKMatcher okp =
        signing(KeyType.OKP, kid, JWSAlgorithm.EdDSA, JWSAlgorithm.Ed25519)
            .curve(Curve.Ed25519)
            .build();
    for (JWK k : fetch(okp)) {
      try {
        out.add(Ed25519Verifier.fromRaw(((OctetKeyPair) k).getDecodedX()));
      } catch (GeneralSecurityException e) {
        log.warn("JWKS key {} is not a usable Ed25519 key: {}", k.getKeyID(), e.getMessage());
      }
    }
    return out;
  }

  private List<JWK> fetch(JWKMatcher matcher) {
    if (jwks == null) {
      return List.of();
    }
    List<JWK> found;
    try {
      found = jwks.get(new JWKSelector(matcher), null);
    } catch (RateLimitReachedException e) {
      found = List.of(); // an unknown kid right after a fetch
    } catch (KeySourceException e) {
      // no key set at hand (the endpoint down since the start, or longer than the outage
      // tolerance): a 401 would end the clients' consume loops for a token that may be good
      throw new KeysUnavailable();
    }
    if (found.isEmpty() && endpoint.down.get()) {
      // a key the provider rotated in while it cannot be reached may be good: 503, as above
      throw new KeysUnavailable();
    }
    return found;
  }

  /**
   * The JWKS endpoint itself, under nimbus's cache: whether its last fetch failed. The outage
   * tolerance above it serves the keys last fetched without saying that the fetch failed.
   */
  private static final class Endpoint implements JWKSetSource<SecurityContext> {
    private final URLBasedJWKSetSource<SecurityContext> url;
    // a background refresh and a request's fetch may run at once: logged on a change only
    private final AtomicBoolean down = new AtomicBoolean();

    Endpoint(URLBasedJWKSetSource<SecurityContext> url) {
      this.url = url;
    }

    @Override
    public JWKSet getJWKSet(JWKSetCacheRefreshEvaluator refresh, long now, SecurityContext context)
        throws KeySourceException {
      try {
        JWKSet set = url.getJWKSet(refresh, now, context);
        if (down.getAndSet(false)) {
          log.info("JWKS endpoint {} answers again", url.getJWKSetURL());
        }
        return set;
      } catch (KeySourceException | RuntimeException e) {
        if (!down.getAndSet(true)) {
          log.warn(
              "JWKS fetch from {} failed ({}): the keys last fetched stay in use; a token of"
                  + " another key answers 503 until it answers again",
              url.getJWKSetURL(),
              e.getMessage());
        }
        throw e;
      }
    }

    @Override
    public void close() throws java.io.IOException {
      url.close();
    }
  }

  /** A PEM {@code PUBLIC KEY} (X.509 SubjectPublicKeyInfo), RSA or Ed25519. */
  static PublicKey parsePem(String pem) {
    String body =
        pem.replace("\\n", "\n")
            .replaceAll("-----(BEGIN|END) PUBLIC KEY-----", "")
            .replaceAll("\\s", "");
    byte[] der;
    try {
      der = Base64.getDecoder().decode(body);
    } catch (IllegalArgumentException e) {
      throw new IllegalArgumentException("JWT_PUBLIC_KEY is not a PEM public key", e);
    }
    for (String alg : new String[] {"RSA", "Ed25519"}) {
      try {
        return KeyFactory.getInstance(alg).generatePublic(new X509EncodedKeySpec(der));
      } catch (GeneralSecurityException e) {
        // not this kind: try the next
      }
    }
    throw new IllegalArgumentException(
        "JWT_PUBLIC_KEY is neither an RSA nor an Ed25519 public key");
  }
}
