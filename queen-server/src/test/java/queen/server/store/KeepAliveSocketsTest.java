package queen.server.store;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import queen.server.TestBroker;

/**
 * The broker's connections to PostgreSQL probe a silent peer after 15 s, not after the kernel's two
 * hours: read from the kernel's own table of TCP sockets (Linux), whose timer column says which
 * timer runs on each socket and when it fires.
 */
class KeepAliveSocketsTest {
  @RegisterExtension static final TestBroker broker = new TestBroker();

  /** Java's sockets are IPv6 ones where the host has IPv6, IPv4 addresses mapped into it. */
  private static final List<Path> TABLES =
      List.of(Path.of("/proc/net/tcp"), Path.of("/proc/net/tcp6"));

  /** /proc/net/tcp counts timers in USER_HZ ticks, 100 a second on Linux. */
  private static final long TICKS_PER_SECOND = 100;

  @Test
  void theBrokersIdleConnectionsRunAKeepaliveTimerOfFifteenSeconds() throws IOException {
    assumeTrue(Files.isReadable(TABLES.getFirst()), "Linux only");
    assertThat(broker.get("/health").status()).isEqualTo(200); // a pool connection exists
    String pg = String.format(Locale.ROOT, ":%04X", broker.db().port());
    List<String> sockets = new ArrayList<>();
    for (Path table : TABLES) {
      if (Files.isReadable(table)) {
        List<String> lines = Files.readAllLines(table);
        sockets.addAll(lines.subList(1, lines.size()));
      }
    }
    List<Long> keepalives =
        sockets.stream()
            .map(String::trim)
            .map(line -> line.split("\\s+"))
            .filter(f -> f[2].endsWith(pg) && f[3].equals("01")) // to PostgreSQL, established
            .filter(f -> f[5].startsWith("02:")) // the keepalive timer runs
            .map(f -> Long.parseLong(f[5].substring(3), 16))
            .toList();
    assertThat(keepalives)
        .as("keepalive timers of connections to PostgreSQL, in ticks")
        .isNotEmpty()
        .allMatch(when -> when <= KeepAliveSockets.IDLE_S * TICKS_PER_SECOND);
  }
}
