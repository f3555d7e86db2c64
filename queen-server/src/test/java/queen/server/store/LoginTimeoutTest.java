package queen.server.store;

import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;

import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.Test;

/**
 * A server that accepts a connection and never answers (a frozen host, a proxy stuck half-way):
 * opening a connection to it gives up after the login timeout. Without one, it waited for good, and
 * the pool's only thread that opens connections with it (helper-144: still waiting after 104 s, the
 * broker without connections though PostgreSQL was back).
 */
class LoginTimeoutTest {
  @Test
  void aServerThatNeverAnswersTheLoginIsGivenUpOn() throws IOException {
    List<Socket> held = new CopyOnWriteArrayList<>();
    try (ServerSocket silent = new ServerSocket(0, 50, InetAddress.getLoopbackAddress())) {
      Thread.ofVirtual()
          .start(
              () -> {
                try {
                  while (true) {
                    held.add(silent.accept()); // accepted, never read nor answered
                  }
                } catch (IOException closed) {
                  // the test is over
                }
              });
      DbConfig frozen = new DbConfig("127.0.0.1", silent.getLocalPort(), "postgres", "", "q", 1);
      assertTimeoutPreemptively(
          Duration.ofSeconds(DbConfig.LOGIN_TIMEOUT_SECONDS + 20),
          () ->
              assertThatThrownBy(
                      () -> DriverManager.getConnection(frozen.jdbcUrl(), "postgres", ""))
                  .isInstanceOf(SQLException.class));
    } finally {
      for (Socket s : held) {
        s.close();
      }
    }
  }
}
