package queen.bench;

import java.io.BufferedInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.ConcurrentLinkedQueue;

/**
 * A minimal HTTP/1.1 client for the load generator: keep-alive connections from a pool, each
 * request written in one go with TCP_NODELAY (as Node's undici does), answers read by
 * Content-Length. It spends far less CPU per request than the JDK's client, and the load generator
 * shares two cores with the broker and PostgreSQL.
 */
final class Http1 implements AutoCloseable {
  /** Status and body of an answer. */
  record Response(int status, byte[] body) {
    String text() {
      return new String(body, StandardCharsets.UTF_8);
    }
  }

  private final String host;
  private final int port;
  private final ConcurrentLinkedQueue<Connection> idle = new ConcurrentLinkedQueue<>();

  Http1(String url) {
    URI u = URI.create(url);
    this.host = u.getHost();
    this.port = u.getPort() < 0 ? 80 : u.getPort();
  }

  Response get(String path, int timeoutMillis) throws IOException {
    return send("GET", path, null, timeoutMillis);
  }

  Response post(String path, byte[] body) throws IOException {
    return send("POST", path, body, 60_000);
  }

  private Response send(String method, String path, byte[] body, int timeoutMillis)
      throws IOException {
    byte[] head =
        (method
                + " "
                + path
                + " HTTP/1.1\r\nHost: "
                + host
                + "\r\n"
                + (body == null
                    ? ""
                    : "Content-Type: application/json\r\nContent-Length: " + body.length + "\r\n")
                + "\r\n")
            .getBytes(StandardCharsets.US_ASCII);
    byte[] request = head;
    if (body != null) {
      request = new byte[head.length + body.length];
      System.arraycopy(head, 0, request, 0, head.length);
      System.arraycopy(body, 0, request, head.length, body.length);
    }
    Connection c = idle.poll();
    boolean reused = c != null;
    if (c == null) {
      c = new Connection(host, port);
    }
    try {
      Response r = c.exchange(request, timeoutMillis);
      if (c.open) {
        idle.offer(c);
      }
      return r;
    } catch (IOException e) {
      c.close();
      if (!reused) {
        throw e;
      }
      // a pooled connection the server had closed: once more on a new one
      Connection fresh = new Connection(host, port);
      Response r = fresh.exchange(request, timeoutMillis);
      if (fresh.open) {
        idle.offer(fresh);
      }
      return r;
    }
  }

  @Override
  public void close() {
    for (Connection c; (c = idle.poll()) != null; ) {
      c.close();
    }
  }

  private static final class Connection {
    private final Socket socket;
    private final InputStream in;
    private final OutputStream out;
    boolean open = true;

    Connection(String host, int port) throws IOException {
      socket = new Socket();
      socket.setTcpNoDelay(true);
      socket.connect(new InetSocketAddress(host, port), 5_000);
      in = new BufferedInputStream(socket.getInputStream(), 64 * 1024);
      out = socket.getOutputStream();
    }

    Response exchange(byte[] request, int timeoutMillis) throws IOException {
      socket.setSoTimeout(timeoutMillis + 30_000);
      out.write(request);
      out.flush();
      String status = line();
      int code = Integer.parseInt(status.substring(9, 12));
      int length = 0;
      for (String h = line(); !h.isEmpty(); h = line()) {
        int colon = h.indexOf(':');
        String name = h.substring(0, colon).trim();
        String value = h.substring(colon + 1).trim();
        if (name.equalsIgnoreCase("Content-Length")) {
          length = Integer.parseInt(value);
        } else if (name.equalsIgnoreCase("Connection") && value.equalsIgnoreCase("close")) {
          open = false;
        }
      }
      byte[] body = in.readNBytes(length);
      if (body.length < length) {
        throw new IOException("connection closed mid-answer");
      }
      if (!open) {
        close();
      }
      return new Response(code, body);
    }

    private String line() throws IOException {
      ByteArrayOutputStream b = new ByteArrayOutputStream(64);
      for (int ch = in.read(); ch != '\n'; ch = in.read()) {
        if (ch < 0) {
          throw new IOException("connection closed");
        }
        if (ch != '\r') {
          b.write(ch);
        }
      }
      return b.toString(StandardCharsets.US_ASCII);
    }

    void close() {
      open = false;
      try {
        socket.close();
      } catch (IOException ignored) {
        // closing anyway
      }
    }
  }
}
