package queen.server;

import java.io.IOException;
import java.net.InetAddress;
import java.net.UnknownHostException;
import java.security.KeyStore;
import org.eclipse.jetty.server.HttpConfiguration;
import org.eclipse.jetty.server.HttpConnectionFactory;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.server.ServerConnector;
import org.eclipse.jetty.server.SslConnectionFactory;
import org.eclipse.jetty.util.ssl.SslContextFactory;
import org.eclipse.jetty.util.thread.VirtualThreadPool;
import queen.server.http.HttpApi;

/**
 * The broker's HTTP listener (Jetty): its socket, TLS from PEM files, and a port it really bound.
 * Everything runs on virtual threads: accepting, selecting and the requests.
 */
final class Listener {
  /** A connection quiet this long between requests is closed (a long-poll's wait is not). */
  private static final long IDLE_TIMEOUT_MS = 5 * 60_000L;

  private final Server server;
  private final ServerConnector connector;

  private final HttpApi api;

  private Listener(Server server, ServerConnector connector, HttpApi api) {
    this.server = server;
    this.connector = connector;
    this.api = api;
  }

  /** Starts listening with {@code api}; fails when the host or the port cannot be bound. */
  static Listener start(BrokerConfig config, HttpApi api) {
    try {
      InetAddress.getByName(config.host());
    } catch (UnknownHostException e) {
      // an invalid setting, not a database that cannot be reached: exit 2, naming it
      throw new BrokerConfig.InvalidConfigException(
          "HOST " + config.host() + " is not a host name or address that resolves");
    }
    // everything on virtual threads, the selector too: with a platform selector handing each
    // request to a virtual thread small requests ran 5-15% slower (docs/benchmarks.md); at most
    // 10,000 tasks at once, more wait for a permit
    VirtualThreadPool threads = new VirtualThreadPool(10_000);
    threads.setName("http");
    Server server = new Server(threads);
    HttpConfiguration http = new HttpConfiguration();
    http.setSendServerVersion(false);
    http.setRequestHeaderSize(16 * 1024);
    // no header cache: Jetty builds one per connection at its second request, a 1,024-row trie of
    // about 100 kB; 5,000 long-polls on connections that had served a request held 660 MB, not 130
    http.setHeaderCacheSize(0);
    http.setUriCompliance(HttpApi.uriCompliance());
    HttpConnectionFactory h1 = new HttpConnectionFactory(http);
    ServerConnector connector =
        config.tls() == null
            ? new ServerConnector(server, 1, 1, h1)
            : new ServerConnector(
                server, 1, 1, new SslConnectionFactory(tls(config), "http/1.1"), h1);
    connector.setHost(config.host());
    connector.setPort(config.port());
    // thousands of long-poll clients connect at once after a deploy; the default of 50 drops SYNs
    connector.setAcceptQueueSize(1024);
    connector.setIdleTimeout(IDLE_TIMEOUT_MS);
    server.addConnector(connector);
    server.setHandler(api);
    // a stopping broker lets requests in flight finish, up to SHUTDOWN_TIMEOUT_MS (see stop())
    server.setStopTimeout(config.shutdownTimeout().toMillis());
    server.setErrorHandler(HttpApi.errors());
    try {
      server.start();
    } catch (Exception e) {
      stopQuietly(server);
      if (e instanceof IOException) {
        throw new IllegalStateException(
            "cannot listen on " + config.host() + ":" + config.port() + " (in use?)", e);
      }
      throw new IllegalStateException("cannot start the HTTP listener: " + e.getMessage(), e);
    }
    return new Listener(server, connector, api);
  }

  int port() {
    return connector.getLocalPort();
  }

  /**
   * Stops accepting connections and lets requests in flight finish, each answer closing its
   * connection, up to SHUTDOWN_TIMEOUT_MS; then closes what is left. Requests that arrive on open
   * connections meanwhile are served, not refused: an ack refused during a rolling restart would
   * leave its batch leased until the lease ran out.
   */
  void stop() {
    closeConnections();
    stopQuietly(server);
  }

  /** From now on every answer closes its connection (see {@link #stop}). */
  void closeConnections() {
    api.closeConnections();
  }

  private static void stopQuietly(Server server) {
    try {
      server.stop();
    } catch (Exception e) {
      org.slf4j.LoggerFactory.getLogger(Listener.class).warn("stopping the listener failed", e);
    }
  }

  private static SslContextFactory.Server tls(BrokerConfig config) {
    BrokerConfig.TlsFiles files = config.tls();
    KeyStore keys;
    try {
      keys = PemKeyStore.load(files.certificate(), files.key());
    } catch (IOException | RuntimeException | java.security.GeneralSecurityException e) {
      throw new BrokerConfig.InvalidConfigException(
          "TLS_CERT_FILE "
              + files.certificate()
              + " and TLS_KEY_FILE "
              + files.key()
              + " must be PEM files of a certificate chain and its private key: "
              + e.getMessage());
    }
    SslContextFactory.Server ssl = new SslContextFactory.Server();
    ssl.setKeyStore(keys);
    ssl.setKeyStorePassword(PemKeyStore.PASSWORD);
    return ssl;
  }
}
