package queen.client;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.Locale;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * An HTTP/1.1 proxy in front of a broker that, for its first {@code drops} requests (of those whose
 * path starts with a prefix, made by {@link #dropping}), forwards the request, lets the broker act
 * on it, and then closes the client's connection without answering: the worst case for a client,
 * which cannot tell whether its request took effect. Made by {@link #refusing}, it answers every
 * request whose path starts with a prefix with a 500 of its own instead, forwarding nothing of it:
 * a broker that keeps failing one route.
 */
final class DroppingProxy implements AutoCloseable {
  private static final byte[] INTERNAL_ERROR =
      ("HTTP/1.1 500 Internal Server Error\r\nContent-Type: application/json\r\n"
              + "Content-Length: 19\r\n\r\n{\"error\":\"refused\"}")
          .getBytes(StandardCharsets.ISO_8859_1);

  private final ServerSocket server;
  private final int brokerPort;
  private final int drops;
  private final String droppedPath;
  private final String refusedPath;
  final AtomicInteger requests = new AtomicInteger();
  final AtomicInteger refused = new AtomicInteger();

  DroppingProxy(int brokerPort, int drops) {
    this(brokerPort, drops, "/", null);
  }

  /** A proxy answering 500 to every request whose path starts with {@code path}. */
  static DroppingProxy refusing(int brokerPort, String path) {
    return new DroppingProxy(brokerPort, 0, "/", path);
  }

  /**
   * A proxy dropping the answers of the first {@code drops} requests to paths under {@code path}.
   */
  static DroppingProxy dropping(int brokerPort, String path, int drops) {
    return new DroppingProxy(brokerPort, drops, path, null);
  }

  private DroppingProxy(int brokerPort, int drops, String droppedPath, String refusedPath) {
    this.brokerPort = brokerPort;
    this.drops = drops;
    this.droppedPath = droppedPath;
    this.refusedPath = refusedPath;
    try {
      this.server = new ServerSocket(0);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    Thread.ofVirtual().start(this::acceptLoop);
  }

  String url() {
    return "http://127.0.0.1:" + server.getLocalPort();
  }

  private void acceptLoop() {
    while (!server.isClosed()) {
      try {
        Socket client = server.accept();
        Thread.ofVirtual().start(() -> serve(client));
      } catch (IOException closed) {
        return;
      }
    }
  }

  private void serve(Socket client) {
    try (client) {
      InputStream in = client.getInputStream();
      OutputStream out = client.getOutputStream();
      while (true) {
        byte[] request = readMessage(in);
        if (request == null) {
          return;
        }
        String path = new String(request, StandardCharsets.ISO_8859_1).split(" ", 3)[1];
        if (refusedPath != null && path.startsWith(refusedPath)) {
          refused.incrementAndGet();
          out.write(INTERNAL_ERROR);
          out.flush();
          continue;
        }
        byte[] response;
        try (Socket broker = new Socket("127.0.0.1", brokerPort)) {
          broker.getOutputStream().write(request);
          broker.getOutputStream().flush();
          response = readMessage(broker.getInputStream());
        }
        if (path.startsWith(droppedPath) && requests.getAndIncrement() < drops) {
          return;
        }
        out.write(response);
        out.flush();
      }
    } catch (IOException e) {
      // the client went away
    }
  }

  /** One HTTP message (head and Content-Length body), or null at the end of the stream. */
  private static byte[] readMessage(InputStream in) throws IOException {
    ByteArrayOutputStream head = new ByteArrayOutputStream();
    int matched = 0;
    while (matched < 4) {
      int b = in.read();
      if (b < 0) {
        return null;
      }
      head.write(b);
      matched = (b == (matched % 2 == 0 ? '\r' : '\n')) ? matched + 1 : (b == '\r' ? 1 : 0);
    }
    int length = 0;
    for (String line : head.toString(StandardCharsets.ISO_8859_1).split("\r\n")) {
      if (line.toLowerCase(Locale.ROOT).startsWith("content-length:")) {
        length = Integer.parseInt(line.substring(15).strip());
      }
    }
    head.write(in.readNBytes(length));
    return head.toByteArray();
  }

  @Override
  public void close() throws IOException {
    server.close();
  }
}
