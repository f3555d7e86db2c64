package queen.server;

import io.helidon.common.configurable.Resource;
import io.helidon.common.pki.Keys;
import io.helidon.common.tls.Tls;
import io.helidon.webserver.WebServer;
import io.helidon.webserver.http.HttpRouting;
import java.util.Optional;
import java.util.function.Consumer;
import queen.server.http.HttpApi;

/** The broker's HTTP listener: its sockets, TLS from PEM files, and a port it really bound. */
final class Listener {
  private Listener() {}

  /** Starts listening with {@code routing}; fails when the port cannot be bound. */
  static WebServer start(BrokerConfig config, Consumer<HttpRouting.Builder> routing) {
    WebServer server;
    try {
      server = build(config, routing);
    } catch (RuntimeException e) {
      for (Throwable t = e; t != null; t = t.getCause()) {
        if (t instanceof java.net.UnknownHostException) {
          // an invalid setting, not a database that cannot be reached: exit 2, naming it
          throw new BrokerConfig.InvalidConfigException(
              "HOST " + config.host() + " is not a host name or address that resolves");
        }
      }
      throw e;
    }
    if (!server.isRunning()) {
      // Helidon logs a listener that could not bind and returns: without this the broker ran
      // its background work with no port, and `queen serve` said it listened on port -1
      server.stop();
      throw new IllegalStateException(
          "cannot listen on " + config.host() + ":" + config.port() + " (in use?)");
    }
    return server;
  }

  private static WebServer build(BrokerConfig config, Consumer<HttpRouting.Builder> routing) {
    return WebServer.builder()
        .host(config.host())
        .port(config.port())
        .maxPayloadSize(config.maxBodyBytes())
        // plain sockets: the NIO mode holds an 8 kB read and an 8 kB write buffer per
        // connection, a parked long-poll's largest cost (docs/benchmarks.md, "Memory")
        .useNio(false)
        // a response is written as headers then body: without TCP_NODELAY, Nagle holds
        // the body back until the client's delayed ACK of the headers, 40 ms later
        .connectionOptions(socket -> socket.tcpNoDelay(true))
        .shutdownHook(false)
        .shutdownGracePeriod(config.shutdownTimeout())
        .update(b -> tls(config.tls()).ifPresent(b::tls))
        .directHandlers(HttpApi.directHandlers())
        .routing(routing)
        .build()
        .start();
  }

  /** TLS when TLS_CERT_FILE and TLS_KEY_FILE are set. */
  private static Optional<Tls> tls(BrokerConfig.TlsFiles files) {
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
