package queen.server.http;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.net.Socket;
import java.net.SocketException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import queen.server.TestBroker;

/**
 * The body of a request a route refuses without reading it (404 here; 401, 403 and the 400 of a
 * path that is not UTF-8 alike): read when small and arriving, so the connection serves the next
 * request, and otherwise left unread with the connection closed after the answer, never waited for.
 * Raw sockets, since an HTTP client would always send the whole body.
 */
class RefusedBodyTest {
  @RegisterExtension static final TestBroker broker = new TestBroker();

  private static final String NOTHING_HERE = "POST /api/v1/nothing-here";

  @Test
  void aSmallBodyIsReadAndTheConnectionServesTheNextRequest() throws IOException {
    assertRefusedThenServesTheNext(100);
  }

  @Test
  void aLargeBodySentWholeIsReadAndItsClientGetsTheAnswer() throws IOException {
    // a push refused 401 whose body was left unread may meet a reset instead of the answer
    assertRefusedThenServesTheNext(2_000_000);
  }

  @Test
  void aPathThatIsNotUtf8IsRefusedByNameAfterItsBodyIsRead() throws IOException {
    // Jetty's own 400 left the body unread and closed: its client met a reset, not the answer
    String error =
        assertRefusedThenServesTheNext(
            "DELETE /api/v1/consumer-groups/%E2%82/queues/q", 2_000_000, " 400 ");
    assertThat(error).contains("not valid percent-encoded UTF-8");
  }

  @Test
  void aPathWithAnEmptyNameIsRefusedAfterItsBodyIsRead() throws IOException {
    assertRefusedThenServesTheNext(
        "DELETE /api/v1/consumer-groups//queues/q", 2_000_000, " 404 "); // no route: an empty name
  }

  private static String assertRefusedThenServesTheNext(int length) throws IOException {
    return assertRefusedThenServesTheNext(NOTHING_HERE, length, " 404 ");
  }

  /**
   * A refused request with a whole body of that length, then another on the same connection.
   *
   * @return the refusal's body
   */
  private static String assertRefusedThenServesTheNext(
      String requestLine, int length, String status) throws IOException {
    try (Socket s = connect()) {
      send(
          s,
          head(requestLine, length)
              + "x".repeat(length)
              + "GET /health HTTP/1.1\r\nHost: q\r\n\r\n");
      BufferedReader in = reader(s);
      List<String> first = head(in);
      assertThat(first.getFirst()).contains(status);
      assertThat(first).noneMatch(h -> h.equalsIgnoreCase("connection: close"));
      String body = body(in, first);
      assertThat(head(in).getFirst()).contains(" 200 ");
      return body;
    }
  }

  @Test
  void aLargeUnsentBodyIsNotWaitedForAndTheConnectionCloses() throws IOException {
    try (Socket s = connect()) {
      send(s, post(10_000_000) + "x".repeat(10));
      BufferedReader in = reader(s);
      List<String> head = head(in);
      assertThat(head.getFirst()).contains(" 404 ");
      assertThat(head).anyMatch(h -> h.equalsIgnoreCase("connection: close"));
    }
  }

  @Test
  void aBodyTrickledByteByByteIsGivenUpOnWithinItsDeadline() throws Exception {
    try (Socket s = connect()) {
      send(s, post(1_000));
      long started = System.nanoTime();
      Thread trickle =
          Thread.ofVirtual()
              .start(
                  () -> {
                    try {
                      for (int i = 0; i < 1_000; i++) {
                        send(s, "x");
                        Thread.sleep(1_000); // the attack itself: a byte a second
                      }
                    } catch (IOException | InterruptedException e) {
                      // the broker closed the connection: what this test waits for
                    }
                  });
      BufferedReader in = reader(s);
      try {
        while (in.readLine() != null) {
          // the answer, if it got out before the connection closed; then the end of the stream
        }
      } catch (SocketException e) {
        // closed with a trickled byte unread: a reset, the same end
      }
      trickle.interrupt();
      // a byte a second never idles 5 s: only the deadline (10 s and a second a MiB) ends it
      assertThat((System.nanoTime() - started) / 1_000_000_000).isLessThan(30);
    }
  }

  @Test
  void aClientWaitingToBeAskedForItsBodyIsNotAskedAndTheConnectionCloses() throws IOException {
    try (Socket s = connect()) {
      send(s, post(10_000_000).replace("\r\n\r\n", "\r\nExpect: 100-continue\r\n\r\n"));
      List<String> head = head(reader(s));
      assertThat(head.getFirst()).as("not 100 Continue").contains(" 404 ");
      assertThat(head).anyMatch(h -> h.equalsIgnoreCase("connection: close"));
    }
  }

  @Test
  void aSmallBodyThatStopsComingIsGivenUpOnWithinSeconds() throws IOException {
    try (Socket s = connect()) {
      send(s, post(100) + "x".repeat(10));
      BufferedReader in = reader(s);
      long started = System.nanoTime();
      List<String> head = head(in);
      assertThat(head.getFirst()).contains(" 404 ");
      assertThat(head).anyMatch(h -> h.equalsIgnoreCase("connection: close"));
      // the connection's own idle timeout is 5 minutes; the read of a refused body gives up in 5 s
      assertThat((System.nanoTime() - started) / 1_000_000_000).isLessThan(30);
    }
  }

  private static String post(long length) {
    return head(NOTHING_HERE, length);
  }

  private static String head(String requestLine, long length) {
    return requestLine
        + " HTTP/1.1\r\nHost: q\r\nContent-Type: application/json\r\nContent-Length: "
        + length
        + "\r\n\r\n";
  }

  private static Socket connect() throws IOException {
    Socket s = new Socket("127.0.0.1", broker.port());
    s.setSoTimeout(60_000); // well under the connection's idle timeout: a wait for it fails here
    return s;
  }

  private static void send(Socket s, String text) throws IOException {
    OutputStream out = s.getOutputStream();
    out.write(text.getBytes(StandardCharsets.US_ASCII));
    out.flush();
  }

  private static BufferedReader reader(Socket s) throws IOException {
    return new BufferedReader(new InputStreamReader(s.getInputStream(), StandardCharsets.UTF_8));
  }

  /** The status line and the headers of the next answer. */
  private static List<String> head(BufferedReader in) throws IOException {
    List<String> lines = new ArrayList<>();
    for (String line = in.readLine(); line != null && !line.isEmpty(); line = in.readLine()) {
      lines.add(line);
    }
    assertThat(lines).as("an answer").isNotEmpty();
    return lines;
  }

  /** The body of an answer with a Content-Length, in ASCII. */
  private static String body(BufferedReader in, List<String> head) throws IOException {
    int length =
        head.stream()
            .filter(h -> h.toLowerCase(java.util.Locale.ROOT).startsWith("content-length:"))
            .map(h -> Integer.parseInt(h.substring(h.indexOf(':') + 1).trim()))
            .findFirst()
            .orElseThrow();
    char[] body = new char[length];
    assertThat(in.read(body, 0, length)).isEqualTo(length);
    return new String(body);
  }
}
