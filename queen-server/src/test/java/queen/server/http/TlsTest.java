package queen.server.http;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.math.BigInteger;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyPair;
import java.security.KeyPairGenerator;
import java.security.KeyStore;
import java.security.cert.X509Certificate;
import java.time.Duration;
import java.time.Instant;
import java.util.Base64;
import java.util.Date;
import java.util.Map;
import javax.net.ssl.SSLContext;
import javax.net.ssl.TrustManagerFactory;
import org.bouncycastle.asn1.x500.X500Name;
import org.bouncycastle.asn1.x509.Extension;
import org.bouncycastle.asn1.x509.GeneralName;
import org.bouncycastle.asn1.x509.GeneralNames;
import org.bouncycastle.cert.jcajce.JcaX509CertificateConverter;
import org.bouncycastle.cert.jcajce.JcaX509v3CertificateBuilder;
import org.bouncycastle.operator.jcajce.JcaContentSignerBuilder;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import queen.server.BrokerConfig;
import queen.server.TestBroker;

/** HTTPS on the listener from PEM files, with a certificate this test makes for 127.0.0.1. */
class TlsTest {
  static final SelfSigned cert = new SelfSigned();

  @RegisterExtension
  static final TestBroker broker =
      new TestBroker(
          Map.of(
              "TLS_CERT_FILE", cert.certFile.toString(), "TLS_KEY_FILE", cert.keyFile.toString()));

  /** A self-signed certificate for 127.0.0.1 and its key, written as PEM files. */
  static final class SelfSigned {
    final X509Certificate certificate;
    final Path certFile;
    final Path keyFile;

    SelfSigned() {
      try {
        KeyPair pair = KeyPairGenerator.getInstance("RSA").generateKeyPair();
        X500Name name = new X500Name("CN=127.0.0.1");
        Instant now = Instant.now();
        JcaX509v3CertificateBuilder b =
            new JcaX509v3CertificateBuilder(
                name,
                BigInteger.valueOf(now.toEpochMilli()),
                Date.from(now.minus(Duration.ofMinutes(1))),
                Date.from(now.plus(Duration.ofDays(1))),
                name,
                pair.getPublic());
        b.addExtension(
            Extension.subjectAlternativeName,
            false,
            new GeneralNames(new GeneralName(GeneralName.iPAddress, "127.0.0.1")));
        certificate =
            new JcaX509CertificateConverter()
                .getCertificate(
                    b.build(new JcaContentSignerBuilder("SHA256withRSA").build(pair.getPrivate())));
        certFile = Files.createTempFile("queen-tls", ".crt");
        keyFile = Files.createTempFile("queen-tls", ".key");
        Files.writeString(certFile, pem("CERTIFICATE", certificate.getEncoded()));
        Files.writeString(keyFile, pem("PRIVATE KEY", pair.getPrivate().getEncoded()));
        certFile.toFile().deleteOnExit();
        keyFile.toFile().deleteOnExit();
      } catch (Exception e) {
        throw new IllegalStateException(e);
      }
    }

    private static String pem(String type, byte[] der) {
      return "-----BEGIN "
          + type
          + "-----\n"
          + Base64.getMimeEncoder(64, new byte[] {'\n'}).encodeToString(der)
          + "\n-----END "
          + type
          + "-----\n";
    }
  }

  private HttpClient trusting() throws Exception {
    KeyStore trust = KeyStore.getInstance(KeyStore.getDefaultType());
    trust.load(null, null);
    trust.setCertificateEntry("queen", cert.certificate);
    TrustManagerFactory tmf =
        TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
    tmf.init(trust);
    SSLContext ssl = SSLContext.getInstance("TLS");
    ssl.init(null, tmf.getTrustManagers(), null);
    return HttpClient.newBuilder().sslContext(ssl).connectTimeout(Duration.ofSeconds(5)).build();
  }

  @Test
  void theBrokerAnswersOverHttpsWithTheConfiguredCertificate() throws Exception {
    String base = "https://127.0.0.1:" + broker.port();
    try (HttpClient https = trusting()) {
      HttpResponse<String> health =
          https.send(
              HttpRequest.newBuilder(URI.create(base + "/health")).build(),
              HttpResponse.BodyHandlers.ofString());
      assertThat(health.statusCode()).isEqualTo(200);
      HttpResponse<String> push =
          https.send(
              HttpRequest.newBuilder(URI.create(base + "/api/v1/push"))
                  .header("Content-Type", "application/json")
                  .POST(
                      HttpRequest.BodyPublishers.ofString(
                          "{\"items\":[{\"queue\":\"tls\",\"payload\":{\"n\":1}}]}"))
                  .build(),
              HttpResponse.BodyHandlers.ofString());
      assertThat(push.statusCode()).isEqualTo(201);
    }
    try (HttpClient plain = HttpClient.newHttpClient()) {
      assertThatThrownBy(
              () ->
                  plain.send(
                      HttpRequest.newBuilder(
                              URI.create("http://127.0.0.1:" + broker.port() + "/health"))
                          .timeout(Duration.ofSeconds(5))
                          .build(),
                      HttpResponse.BodyHandlers.ofString()))
          .as("plain HTTP is not served on a TLS listener")
          .isInstanceOf(IOException.class);
    }
  }

  @Test
  void halfAConfigurationOrAnUnreadableFileStopsTheBrokerNamingTheVariable() {
    assertThatThrownBy(
            () -> BrokerConfig.fromEnv(Map.of("TLS_CERT_FILE", cert.certFile.toString())))
        .isInstanceOf(BrokerConfig.InvalidConfigException.class)
        .hasMessageContaining("TLS_KEY_FILE");
    assertThatThrownBy(
            () ->
                BrokerConfig.fromEnv(
                    Map.of("TLS_CERT_FILE", "/no/such.crt", "TLS_KEY_FILE", "/no/such.key")))
        .isInstanceOf(BrokerConfig.InvalidConfigException.class)
        .hasMessageStartingWith("TLS_CERT_FILE /no/such.crt");
  }
}
