package queen.server;

import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.math.BigInteger;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.KeyFactory;
import java.security.KeyStore;
import java.security.PrivateKey;
import java.security.cert.Certificate;
import java.security.cert.CertificateFactory;
import java.security.spec.PKCS8EncodedKeySpec;
import java.util.Base64;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * A key store in memory from PEM files: a certificate chain, server certificate first, and its
 * private key, PKCS#8 ({@code PRIVATE KEY}: RSA, EC or Ed25519) or PKCS#1 ({@code RSA PRIVATE KEY},
 * as older OpenSSL writes). Encrypted keys are not read.
 */
final class PemKeyStore {
  /** The store lives only in memory; its password protects nothing. */
  static final String PASSWORD = "queen";

  private static final Pattern BLOCK =
      Pattern.compile("-----BEGIN ([A-Z ]+)-----([^-]+)-----END \\1-----");

  private PemKeyStore() {}

  static KeyStore load(Path certificate, Path key) throws IOException, GeneralSecurityException {
    List<? extends Certificate> chain =
        List.copyOf(
            CertificateFactory.getInstance("X.509")
                .generateCertificates(new ByteArrayInputStream(Files.readAllBytes(certificate))));
    if (chain.isEmpty()) {
      throw new IllegalArgumentException("no certificate found");
    }
    KeyStore store = KeyStore.getInstance("PKCS12");
    store.load(null, null);
    store.setKeyEntry(
        "queen",
        privateKey(Files.readString(key)),
        PASSWORD.toCharArray(),
        chain.toArray(new Certificate[0]));
    return store;
  }

  private static PrivateKey privateKey(String pem) throws GeneralSecurityException {
    Matcher m = BLOCK.matcher(pem);
    while (m.find()) {
      byte[] der = Base64.getMimeDecoder().decode(m.group(2));
      switch (m.group(1)) {
        case "PRIVATE KEY" -> {
          return pkcs8(der);
        }
        case "RSA PRIVATE KEY" -> {
          return KeyFactory.getInstance("RSA")
              .generatePrivate(new PKCS8EncodedKeySpec(rsaInPkcs8(der)));
        }
        default -> {
          // certificates or parameters beside the key
        }
      }
    }
    throw new IllegalArgumentException("no private key found (PRIVATE KEY or RSA PRIVATE KEY)");
  }

  private static PrivateKey pkcs8(byte[] der) throws GeneralSecurityException {
    GeneralSecurityException last = null;
    for (String algorithm : List.of("RSA", "EC", "Ed25519", "RSASSA-PSS")) {
      try {
        return KeyFactory.getInstance(algorithm).generatePrivate(new PKCS8EncodedKeySpec(der));
      } catch (GeneralSecurityException e) {
        last = e;
      }
    }
    throw last;
  }

  /**
   * A PKCS#1 RSA key wrapped as PKCS#8: SEQUENCE { INTEGER 0, SEQUENCE { rsaEncryption, NULL },
   * OCTET STRING key }.
   */
  private static byte[] rsaInPkcs8(byte[] pkcs1) {
    byte[] version = {0x02, 0x01, 0x00};
    byte[] algorithm = {
      0x30,
      0x0d,
      0x06,
      0x09,
      0x2a,
      (byte) 0x86,
      0x48,
      (byte) 0x86,
      (byte) 0xf7,
      0x0d,
      0x01,
      0x01,
      0x01,
      0x05,
      0x00
    };
    byte[] octets = tlv(0x04, pkcs1);
    byte[] body = new byte[version.length + algorithm.length + octets.length];
    System.arraycopy(version, 0, body, 0, version.length);
    System.arraycopy(algorithm, 0, body, version.length, algorithm.length);
    System.arraycopy(octets, 0, body, version.length + algorithm.length, octets.length);
    return tlv(0x30, body);
  }

  /** A DER tag, its length (short or long form) and the value. */
  private static byte[] tlv(int tag, byte[] value) {
    byte[] length;
    if (value.length < 0x80) {
      length = new byte[] {(byte) value.length};
    } else {
      byte[] n = BigInteger.valueOf(value.length).toByteArray();
      int skip = n[0] == 0 ? 1 : 0;
      length = new byte[n.length - skip + 1];
      length[0] = (byte) (0x80 | (n.length - skip));
      System.arraycopy(n, skip, length, 1, n.length - skip);
    }
    byte[] out = new byte[1 + length.length + value.length];
    out[0] = (byte) tag;
    System.arraycopy(length, 0, out, 1, length.length);
    System.arraycopy(value, 0, out, 1 + length.length, value.length);
    return out;
  }
}
