package queen.server.http.auth;

import com.nimbusds.jose.JOSEException;
import com.nimbusds.jose.JWSAlgorithm;
import com.nimbusds.jose.JWSHeader;
import com.nimbusds.jose.JWSVerifier;
import com.nimbusds.jose.jca.JCAContext;
import com.nimbusds.jose.util.Base64URL;
import java.security.GeneralSecurityException;
import java.security.KeyFactory;
import java.security.PublicKey;
import java.security.Signature;
import java.security.spec.X509EncodedKeySpec;
import java.util.HexFormat;
import java.util.Set;

/**
 * EdDSA (Ed25519) signatures checked with the JDK's own Ed25519: nimbus's verifier for it needs
 * Google Tink, a large dependency for one algorithm the JDK has had since 15.
 */
final class Ed25519Verifier implements JWSVerifier {
  /** The DER prefix of an Ed25519 SubjectPublicKeyInfo, before the 32 key bytes (RFC 8410). */
  private static final byte[] SPKI_PREFIX = HexFormat.of().parseHex("302a300506032b6570032100");

  private final PublicKey key;
  private final JCAContext jca = new JCAContext();

  Ed25519Verifier(PublicKey key) {
    this.key = key;
  }

  /** The public key of a JWK's raw 32-byte {@code x}. */
  static PublicKey fromRaw(byte[] x) throws GeneralSecurityException {
    if (x.length != 32) {
      throw new GeneralSecurityException("an Ed25519 key has 32 bytes, got " + x.length);
    }
    byte[] der = new byte[SPKI_PREFIX.length + 32];
    System.arraycopy(SPKI_PREFIX, 0, der, 0, SPKI_PREFIX.length);
    System.arraycopy(x, 0, der, SPKI_PREFIX.length, 32);
    return KeyFactory.getInstance("Ed25519").generatePublic(new X509EncodedKeySpec(der));
  }

  @Override
  public boolean verify(JWSHeader header, byte[] signingInput, Base64URL signature)
      throws JOSEException {
    try {
      Signature s = Signature.getInstance("Ed25519");
      s.initVerify(key);
      s.update(signingInput);
      return s.verify(signature.decode());
    } catch (GeneralSecurityException e) {
      return false;
    }
  }

  @Override
  public Set<JWSAlgorithm> supportedJWSAlgorithms() {
    return Set.of(JWSAlgorithm.EdDSA, JWSAlgorithm.Ed25519);
  }

  @Override
  public JCAContext getJCAContext() {
    return jca;
  }
}
