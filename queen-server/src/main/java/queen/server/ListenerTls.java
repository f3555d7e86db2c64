package queen.server;

import io.helidon.common.configurable.Resource;
import io.helidon.common.pki.Keys;
import io.helidon.common.tls.Tls;
import java.util.Optional;

/** TLS on the listener from PEM files, when TLS_CERT_FILE and TLS_KEY_FILE are set. */
final class ListenerTls {
  private ListenerTls() {}

  static Optional<Tls> of(BrokerConfig.TlsFiles files) {
    if (files == null) {
      return Optional.empty();
    }
    try {
      Keys keys =
          Keys.builder()
              .pem(
                  pem ->
                      pem.key(Resource.create(files.key()))
                          .certChain(Resource.create(files.certificate())))
              .build();
      if (keys.privateKey().isEmpty() || keys.certChain().isEmpty()) {
        throw new IllegalArgumentException("no private key or no certificate found");
      }
      return Optional.of(Tls.builder().privateKey(keys).privateKeyCertChain(keys).build());
    } catch (RuntimeException e) {
      throw new BrokerConfig.InvalidConfigException(
          "TLS_CERT_FILE "
              + files.certificate()
              + " and TLS_KEY_FILE "
              + files.key()
              + " must be PEM files of a certificate chain and its private key: "
              + e.getMessage());
    }
  }
}
