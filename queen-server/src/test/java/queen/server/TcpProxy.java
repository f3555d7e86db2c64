package queen.server;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * A TCP forwarder between the broker and PostgreSQL that a test can cut: {@link #cut()} closes
 * every connection and refuses new ones, as a database that went away; {@link #restore()} accepts
 * again on the same port.
 */
public final class TcpProxy implements AutoCloseable {
  private final int targetPort;
  private final Set<Socket> open = ConcurrentHashMap.newKeySet();
  private final Set<Socket> upstream = ConcurrentHashMap.newKeySet();
  private final int port;
  private volatile ServerSocket server;

  public TcpProxy(int targetPort) throws IOException {
    this.targetPort = targetPort;
    this.server = listenBelowEphemeral();
    this.port = server.getLocalPort();
  }

  /**
   * A port below Linux's ephemeral range (32768 up): one from that range, free while cut, could be
   * taken as the local port of any outgoing connection, and restore() could not listen on it again
   * ("Address already in use", a flaky FailoverTest).
   */
  private ServerSocket listenBelowEphemeral() throws IOException {
    java.util.Random random = new java.util.Random();
    for (int attempt = 1; ; attempt++) {
      try {
        return listen(20_000 + random.nextInt(12_000));
      } catch (java.net.BindException e) {
        if (attempt == 100) {
          throw e;
        }
      }
    }
  }

  public int port() {
    return port;
  }

  private ServerSocket listen(int on) throws IOException {
    ServerSocket s = new ServerSocket();
    try {
      s.setReuseAddress(true);
      s.bind(new InetSocketAddress("127.0.0.1", on));
    } catch (IOException e) {
      s.close();
      throw e;
    }
    Thread.ofVirtual().start(() -> accept(s));
    return s;
  }

  private void accept(ServerSocket s) {
    while (!s.isClosed()) {
      try {
        Socket client = s.accept();
        open.add(client);
        Socket upstream = new Socket("127.0.0.1", targetPort);
        open.add(upstream);
        this.upstream.add(upstream);
        // a connection accepted while cut() ran may have missed its sweep of the open ones: it
        // went through to PostgreSQL during the outage (a pool's new connection, a flaky
        // FailoverTest)
        if (s.isClosed()) {
          close(client);
          close(upstream);
          return;
        }
        Thread.ofVirtual().start(() -> pump(client, upstream));
        Thread.ofVirtual().start(() -> pump(upstream, client));
      } catch (IOException e) {
        return; // the listener was closed by cut()
      }
    }
  }

  private void pump(Socket from, Socket to) {
    byte[] buf = new byte[16 * 1024];
    try (InputStream in = from.getInputStream();
        OutputStream out = to.getOutputStream()) {
      int n;
      while ((n = in.read(buf)) >= 0) {
        out.write(buf, 0, n);
        out.flush();
      }
    } catch (IOException e) {
      // one side closed: close the other below
    } finally {
      close(from);
      close(to);
    }
  }

  private void close(Socket s) {
    open.remove(s);
    try {
      s.close();
    } catch (IOException e) {
      // already closed
    }
  }

  /** The local ports of the connections to the target: its sessions' {@code client_port}. */
  public List<Integer> upstreamPorts() {
    return upstream.stream().filter(u -> !u.isClosed()).map(Socket::getLocalPort).toList();
  }

  /** The database goes away: every connection drops, new ones are refused. */
  public void cut() throws IOException {
    server.close();
    for (Socket s : open) {
      close(s);
    }
  }

  /** The database is back, on the same port. */
  public void restore() throws IOException {
    server = listen(port);
  }

  @Override
  public void close() throws IOException {
    cut();
  }
}
