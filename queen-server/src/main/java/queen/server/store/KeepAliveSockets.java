package queen.server.store;

import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketOption;
import javax.net.SocketFactory;
import jdk.net.ExtendedSocketOptions;

/**
 * The sockets of the broker's PostgreSQL connections (pgjdbc's {@code socketFactory}): TCP
 * keepalive probes after {@link #IDLE_S} seconds of silence, every {@link #INTERVAL_S}, given up
 * after {@link #COUNT} unanswered. A connection whose server vanished without a reset (a network
 * path gone silent, a failover that moved the address) then fails in about half a minute; with the
 * kernel's defaults (two hours of silence first) a push blocked reading its answer held its push
 * slot, and every push queued behind it, for that long. A live server's kernel answers the probes
 * however long its statement runs, so a long VACUUM is never cut.
 */
public final class KeepAliveSockets extends SocketFactory {
  static final int IDLE_S = 15;
  static final int INTERVAL_S = 5;
  static final int COUNT = 3;

  /** pgjdbc instantiates the factory by its class name. */
  public KeepAliveSockets() {}

  @Override
  public Socket createSocket() throws IOException {
    Socket s = new Socket();
    s.setKeepAlive(true);
    set(s, ExtendedSocketOptions.TCP_KEEPIDLE, IDLE_S);
    set(s, ExtendedSocketOptions.TCP_KEEPINTERVAL, INTERVAL_S);
    set(s, ExtendedSocketOptions.TCP_KEEPCOUNT, COUNT);
    return s;
  }

  /** Where the platform has the option (Linux, macOS); elsewhere the kernel's defaults stay. */
  private static void set(Socket s, SocketOption<Integer> option, int value) throws IOException {
    if (s.supportedOptions().contains(option)) {
      s.setOption(option, value);
    }
  }

  @Override
  public Socket createSocket(String host, int port) throws IOException {
    return connected(new InetSocketAddress(host, port), null);
  }

  @Override
  public Socket createSocket(String host, int port, InetAddress local, int localPort)
      throws IOException {
    return connected(new InetSocketAddress(host, port), new InetSocketAddress(local, localPort));
  }

  @Override
  public Socket createSocket(InetAddress host, int port) throws IOException {
    return connected(new InetSocketAddress(host, port), null);
  }

  @Override
  public Socket createSocket(InetAddress host, int port, InetAddress local, int localPort)
      throws IOException {
    return connected(new InetSocketAddress(host, port), new InetSocketAddress(local, localPort));
  }

  private Socket connected(InetSocketAddress to, InetSocketAddress from) throws IOException {
    Socket s = createSocket();
    if (from != null) {
      s.bind(from);
    }
    s.connect(to);
    return s;
  }
}
