package queen.server.http;

import java.io.IOException;
import java.io.InputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Arrays;
import java.util.HashMap;
import java.util.HashSet;
import java.util.HexFormat;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import queen.server.pop.Caller;

/**
 * Notices long-poll clients that have gone, so that their pops stop waiting instead of claiming
 * messages for a closed connection (where they would wait out a lease, or with autoAck be lost to
 * the group).
 *
 * <p>A handler cannot see its client close: the HTTP server reads a connection only between
 * requests. The kernel can. Every interval, while long-polls wait, the broker reads Linux's table
 * of its network namespace's TCP connections once: {@code /proc/net/tcp6}, or {@code /proc/net/tcp}
 * where the listener is not there (an IPv4-only JVM), since accepted connections are listed with
 * their listener. A watched connection in CLOSE_WAIT has had the client's FIN (the client closed
 * it; HTTP clients do not half-close while they wait for an answer). One missing from two reads in
 * a row was reset (the kernel drops a reset connection from the table; one read alone may miss a
 * live entry, since the table is read in pages while it changes). Either way the pop's {@link
 * Caller} leaves. A read that finds neither the listener nor any other watched connection counts no
 * miss: a table that is not the kernel's must not end every long-poll.
 *
 * <p>The cost is the kernel's walk of every connection (about 1.5 ms per thousand) and a parse of
 * the lines on the broker's ports, once per interval, only while long-polls wait. Where there is no
 * such table (not Linux), or QUEEN_DEPARTURE_SCAN_MS is 0, nothing is watched and a long-poll whose
 * client left waits out its deadline, as before.
 */
public final class Departures implements AutoCloseable {
  private static final Logger log = LoggerFactory.getLogger(Departures.class);
  private static final Path TCP6 = Path.of("/proc/net/tcp6");
  private static final Path TCP = Path.of("/proc/net/tcp");
  private static final int CLOSE_WAIT = 0x08;
  private static final int LISTEN = 0x0A;
  private static final HexFormat HEX = HexFormat.of().withUpperCase();

  /** A connection: the client's address and port, the broker's port. */
  record Peer(InetAddress address, int port, int localPort) {
    /**
     * The client's end as the IPv6 or IPv4 table prints it ("0100007F:9C41"): the hex of each
     * 32-bit word of the address as the kernel holds it, a colon, the hex port; an IPv4 client is
     * IPv4-mapped in the IPv6 table, and no IPv6 client is in the IPv4 one (null).
     */
    String endpoint(boolean ipv6) {
      byte[] a = address.getAddress();
      if (ipv6 && a.length == 4) {
        a =
            ByteBuffer.allocate(16)
                .putLong(0)
                .putShort((short) 0)
                .putShort((short) -1)
                .put(a)
                .array();
      } else if (!ipv6 && a.length == 16) {
        return null;
      }
      ByteBuffer words = ByteBuffer.wrap(a).order(ByteOrder.nativeOrder());
      StringBuilder out = new StringBuilder(45);
      while (words.hasRemaining()) {
        out.append(HEX.toHexDigits(words.getInt()));
      }
      return out.append(':').append(HEX.toHexDigits((short) port)).toString();
    }
  }

  /**
   * A watched pop's connection and how many conclusive reads in a row have not found it. Its ends
   * are printed by the first read, so that long-polls answered at once pay nothing for them.
   */
  private static final class Watch {
    final Peer peer;
    String ipv6;
    String ipv4;
    int missing;

    Watch(Peer peer) {
      this.peer = peer;
    }

    String endpoint(boolean v6) {
      if (ipv6 == null) {
        ipv6 = peer.endpoint(true);
        ipv4 = peer.endpoint(false);
      }
      return v6 ? ipv6 : ipv4;
    }
  }

  /** What one read of a table found on the watched ports. */
  private static final class Found {
    final Set<Integer> listening = new HashSet<>();
    // per port of the broker, the clients' ends ("0100007F:9C41") to whether they are closing
    final Map<Integer, Map<String, Boolean>> connections = new HashMap<>();

    /** Whether the connection is closing; null when it is not listed. */
    Boolean closing(Watch w, boolean ipv6) {
      Map<String, Boolean> clients = connections.get(w.peer.localPort());
      String client = w.endpoint(ipv6);
      return clients == null || client == null ? null : clients.get(client);
    }
  }

  private final Map<Caller, Watch> watched = new ConcurrentHashMap<>();
  private final Path tcp6;
  private final Path tcp;
  private final ScheduledExecutorService timer;
  // the timer's alone: the last read's size, kept for the next
  private byte[] buf = new byte[1 << 16];
  private boolean failing;

  /** Reads these tables every {@code interval}; zero: only when {@link #scan()} is called. */
  Departures(Path tcp6, Path tcp, Duration interval) {
    this.tcp6 = tcp6;
    this.tcp = tcp;
    if (interval.isZero() || !Files.isReadable(tcp)) {
      timer = null;
      return;
    }
    timer =
        Executors.newSingleThreadScheduledExecutor(
            Thread.ofPlatform().daemon().name("queen-departures").factory());
    long ms = interval.toMillis();
    timer.scheduleWithFixedDelay(this::scanQuietly, ms, ms, TimeUnit.MILLISECONDS);
  }

  /** Reads the kernel's tables every {@code interval}; watches nothing where there are none. */
  public static Departures start(Duration interval) {
    if (!interval.isZero() && !Files.isReadable(TCP)) {
      log.info("no /proc/net/tcp: long-polls whose client left wait out their deadline");
    }
    return new Departures(TCP6, TCP, interval);
  }

  /** The caller for a long-poll of {@code req}; it leaves when the request's client has gone. */
  Caller watch(Request req) {
    Caller caller = new Caller();
    if (timer != null
        && req.remote() instanceof InetSocketAddress remote
        && !remote.isUnresolved()) {
      watch(caller, new Peer(remote.getAddress(), remote.getPort(), req.localPort()));
    }
    return caller;
  }

  void watch(Caller caller, Peer peer) {
    watched.put(caller, new Watch(peer));
  }

  /** The pop has answered: its connection is no longer watched. */
  void forget(Caller caller) {
    watched.remove(caller);
  }

  private void scanQuietly() {
    try {
      scan();
      failing = false;
    } catch (IOException | RuntimeException e) {
      // the timer drops a task that throws; the next read may well succeed. Said once a spell
      if (!failing) {
        log.warn("reading the TCP table for departed clients failed: {}", e.toString());
      }
      failing = true;
    }
  }

  /** One read of the tables; the callers whose client has gone leave. */
  void scan() throws IOException {
    if (watched.isEmpty()) {
      return;
    }
    Set<Integer> ports = new HashSet<>();
    watched.values().forEach(w -> ports.add(w.peer.localPort()));
    Found v6 = Files.isReadable(tcp6) ? read(tcp6, ports) : new Found();
    // the IPv4 table only for ports whose listener is not IPv6 (an IPv4-only JVM or kernel)
    Found v4 = v6.listening.containsAll(ports) ? new Found() : read(tcp, ports);
    // misses count only where the read found some watched connection beside the listener
    Set<Found> seeing = new HashSet<>();
    watched
        .values()
        .forEach(
            w -> {
              Found t = table(w, v6, v4);
              if (t != null && t.closing(w, t == v6) != null) {
                seeing.add(t);
              }
            });
    watched.forEach(
        (caller, w) -> {
          Found t = table(w, v6, v4);
          if (t == null) {
            return; // the listener was not seen: this read proves nothing
          }
          Boolean closing = t.closing(w, t == v6);
          if (closing == null) {
            if (seeing.contains(t) && ++w.missing >= 2) {
              caller.leave();
            }
          } else if (closing) {
            caller.leave();
          } else {
            w.missing = 0;
          }
        });
  }

  /** The table that lists the watched connection's listener, or null. */
  private static Found table(Watch w, Found v6, Found v4) {
    int port = w.peer.localPort();
    return v6.listening.contains(port) ? v6 : v4.listening.contains(port) ? v4 : null;
  }

  /**
   * The listeners and connections of {@code table} on {@code ports}. A line is "sl: local remote
   * state ...", each end as {@link Peer#endpoint} prints it, the state in hex.
   */
  private Found read(Path table, Set<Integer> ports) throws IOException {
    int n = 0;
    try (InputStream in = Files.newInputStream(table)) {
      for (int r; (r = in.read(buf, n, buf.length - n)) >= 0; ) {
        n += r;
        if (n == buf.length) {
          buf = Arrays.copyOf(buf, n * 2);
        }
      }
    }
    Found found = new Found();
    int line = next(0, n, (byte) '\n') + 1; // past the header
    while (line < n) {
      int end = next(line, n, (byte) '\n');
      int local = skip(next(line, end, (byte) ':') + 1, end);
      int localEnd = next(local, end, (byte) ' ');
      int remote = skip(localEnd, end);
      int remoteEnd = next(remote, end, (byte) ' ');
      int state = skip(remoteEnd, end);
      if (state + 2 <= end && localEnd - local > 5) {
        int port = hex(localEnd - 4, localEnd);
        if (ports.contains(port)) {
          int st = hex(state, state + 2);
          if (st == LISTEN) {
            found.listening.add(port);
          } else {
            String client = new String(buf, remote, remoteEnd - remote, StandardCharsets.US_ASCII);
            found
                .connections
                .computeIfAbsent(port, x -> new HashMap<>())
                .merge(client, st == CLOSE_WAIT, Boolean::logicalOr);
          }
        }
      }
      line = end + 1;
    }
    return found;
  }

  /** The index of {@code b} from {@code i} on, or {@code end}. */
  private int next(int i, int end, byte b) {
    while (i < end && buf[i] != b) {
      i++;
    }
    return i;
  }

  private int skip(int i, int end) {
    while (i < end && buf[i] == ' ') {
      i++;
    }
    return i;
  }

  private int hex(int from, int to) {
    int v = 0;
    for (int i = from; i < to; i++) {
      v = (v << 4) | Character.digit(buf[i], 16);
    }
    return v;
  }

  @Override
  public void close() {
    if (timer != null) {
      timer.shutdownNow();
    }
  }
}
