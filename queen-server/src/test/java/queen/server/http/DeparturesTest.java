package queen.server.http;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.IOException;
import java.net.InetAddress;
import java.nio.ByteOrder;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import queen.server.pop.Caller;

/** Reading the kernel's TCP tables, as a little-endian Linux prints them. */
class DeparturesTest {
  private static final String HEADER =
      "  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout"
          + " inode\n";
  // the broker's port 6632 (19E8) on ::ffff:127.0.0.1, or 127.0.0.1 in the IPv4 table
  private static final String LOCAL6 = "0000000000000000FFFF00000100007F:19E8";
  private static final String LOCAL4 = "0100007F:19E8";
  private static final String LISTENER6 =
      line("00000000000000000000000000000000:19E8", "00000000000000000000000000000000:0000", "0A");
  private static final String LISTENER4 = line("00000000:19E8", "00000000:0000", "0A");

  @TempDir Path dir;
  private Path tcp6;
  private Path tcp;
  private Departures departures;

  @BeforeEach
  void littleEndian() {
    assumeTrue(ByteOrder.nativeOrder() == ByteOrder.LITTLE_ENDIAN);
    tcp6 = dir.resolve("tcp6");
    tcp = dir.resolve("tcp");
    departures = new Departures(tcp6, tcp, Duration.ZERO);
  }

  @Test
  void endpointsArePrintedAsTheKernelPrintsThem() throws Exception {
    assertThat(peer("127.0.0.1", 40001).endpoint(false)).isEqualTo("0100007F:9C41");
    assertThat(peer("10.1.2.3", 50000).endpoint(true))
        .isEqualTo("0000000000000000FFFF00000302010A:C350");
    assertThat(peer("::1", 50000).endpoint(true))
        .isEqualTo("00000000000000000000000001000000:C350");
    assertThat(peer("::1", 50000).endpoint(false)).isNull();
  }

  @Test
  void aConnectionInCloseWaitLeavesAtOnce() throws Exception {
    Caller closed = watch("10.1.2.3", 50000);
    Caller open = watch("10.1.2.3", 50001);
    write(
        tcp6,
        LISTENER6
            + line(LOCAL6, "0000000000000000FFFF00000302010A:C350", "08")
            + line(LOCAL6, "0000000000000000FFFF00000302010A:C351", "01"));
    write(tcp, "");
    departures.scan();
    assertThat(closed.gone()).isTrue();
    assertThat(open.gone()).isFalse();
  }

  @Test
  void aConnectionMissingFromTwoReadsInARowLeaves() throws Exception {
    Caller reset = watch("127.0.0.1", 40000);
    Caller missedOnce = watch("127.0.0.1", 40001);
    Caller staying = watch("127.0.0.1", 40002);
    String stays = line(LOCAL6, "0000000000000000FFFF00000100007F:9C42", "01");
    write(tcp6, LISTENER6 + line(LOCAL6, "0000000000000000FFFF00000100007F:9C41", "01") + stays);
    departures.scan();
    assertThat(reset.gone()).as("one read may miss a live entry").isFalse();
    write(tcp6, LISTENER6 + stays);
    departures.scan();
    assertThat(reset.gone()).isTrue();
    assertThat(missedOnce.gone()).isFalse();
    write(tcp6, LISTENER6 + line(LOCAL6, "0000000000000000FFFF00000100007F:9C41", "01") + stays);
    departures.scan();
    write(tcp6, LISTENER6 + stays);
    departures.scan();
    assertThat(missedOnce.gone()).as("its misses were not in a row").isFalse();
    assertThat(staying.gone()).isFalse();
  }

  @Test
  void aReadThatListsTheListenerButNoneOfTheWatchedConnectionsCountsNoMiss() throws Exception {
    Caller only = watch("127.0.0.1", 40000);
    Caller other = watch("127.0.0.1", 40001);
    write(tcp6, LISTENER6);
    departures.scan();
    departures.scan();
    departures.scan();
    assertThat(only.gone()).isFalse();
    assertThat(other.gone()).isFalse();
  }

  @Test
  void theIpv4TableIsReadWhereTheListenerIsAndAReadWithoutTheListenerProvesNothing()
      throws Exception {
    Caller closed = watch("127.0.0.1", 40000);
    Caller open = watch("127.0.0.1", 40001);
    write(tcp6, "");
    write(tcp, "");
    departures.scan();
    departures.scan();
    departures.scan();
    assertThat(open.gone()).as("no listener seen: no miss counted").isFalse();
    write(
        tcp, LISTENER4 + line(LOCAL4, "0100007F:9C40", "08") + line(LOCAL4, "0100007F:9C41", "01"));
    departures.scan();
    assertThat(closed.gone()).isTrue();
    assertThat(open.gone()).isFalse();
  }

  @Test
  void connectionsOnOtherPortsOrOfAnsweredPopsAreLeftAlone() throws Exception {
    Caller answered = watch("127.0.0.1", 40000);
    Caller watched = watch("127.0.0.1", 40001);
    departures.forget(answered);
    write(
        tcp6,
        LISTENER6
            + line(LOCAL6, "0000000000000000FFFF00000100007F:9C40", "08")
            + line(LOCAL6, "0000000000000000FFFF00000100007F:9C41", "01")
            // the same client port towards another of the machine's ports is another connection
            + line(
                "0000000000000000FFFF00000100007F:1F90",
                "0000000000000000FFFF00000100007F:9C41",
                "08"));
    departures.scan();
    assertThat(answered.gone()).isFalse();
    assertThat(watched.gone()).isFalse();
  }

  private Caller watch(String address, int port) throws Exception {
    Caller c = new Caller();
    departures.watch(c, peer(address, port));
    return c;
  }

  private static Departures.Peer peer(String address, int port) throws Exception {
    return new Departures.Peer(InetAddress.getByName(address), port, 6632);
  }

  private static String line(String local, String remote, String state) {
    return "   0: "
        + local
        + " "
        + remote
        + " "
        + state
        + " 00000000:00000000 00:00000000 00000000     0        0 12345 1 0000000000000000 20 4"
        + " 30 10 -1\n";
  }

  private static void write(Path table, String lines) throws IOException {
    Files.writeString(table, HEADER + lines);
  }
}
