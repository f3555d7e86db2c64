package queen.server.ops;

import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.lang.management.MemoryUsage;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.Map;
import java.util.function.Supplier;
import queen.server.store.Database;
import queen.server.store.StatsStore;

/**
 * This broker's figures for the analytics routes, read with each statistics tick: resident memory
 * (Linux), heap, process CPU, threads, the pool's connections and the long-polls parked by queue.
 */
public final class BrokerSampler {
  private static final Path STATUS = Path.of("/proc/self/status");

  private final String hostname;
  private final Instant startedAt;
  private final Database db;
  private final Supplier<Map<String, Integer>> parked;
  private volatile String brokerId;

  public BrokerSampler(
      String hostname, Instant startedAt, Database db, Supplier<Map<String, Integer>> parked) {
    this.hostname = hostname;
    this.startedAt = startedAt;
    this.db = db;
    this.parked = parked;
  }

  /** The broker listens: from now on it reports itself as {@code hostname:port}. */
  public void listening(int port) {
    brokerId = hostname + ":" + port;
  }

  /**
   * The machine's name: $HOSTNAME (containers set it), else the kernel's (no resolver call at
   * start: a slow DNS must not delay it), else what the resolver says.
   */
  public static String hostname() {
    String env = System.getenv("HOSTNAME");
    if (env != null && !env.isBlank()) {
      return env;
    }
    try {
      String kernel = Files.readString(Path.of("/proc/sys/kernel/hostname")).strip();
      if (!kernel.isEmpty()) {
        return kernel;
      }
    } catch (IOException e) {
      // not Linux: ask the resolver
    }
    try {
      return java.net.InetAddress.getLocalHost().getHostName();
    } catch (java.net.UnknownHostException e) {
      return "localhost";
    }
  }

  /** Null until the broker listens (it has no name yet). */
  StatsStore.BrokerSample sample(long pushed, long popped, long acked) {
    String id = brokerId;
    if (id == null) {
      return null;
    }
    MemoryUsage heap = ManagementFactory.getMemoryMXBean().getHeapMemoryUsage();
    return new StatsStore.BrokerSample(
        id,
        hostname,
        startedAt,
        rss(),
        heap.getUsed(),
        heap.getCommitted(),
        cpuPercent(),
        ManagementFactory.getThreadMXBean().getThreadCount(),
        db.poolState(),
        pushed,
        popped,
        acked,
        parked.get());
  }

  /** VmRSS of /proc/self/status in bytes; null off Linux. */
  public static Long rss() {
    try {
      for (String line : Files.readAllLines(STATUS)) {
        if (line.startsWith("VmRSS:")) {
          return Long.parseLong(line.replaceAll("\\D", "")) * 1024;
        }
      }
    } catch (IOException | NumberFormatException e) {
      return null;
    }
    return null;
  }

  /** The process's recent CPU use in percent of the machine; null where the JVM cannot tell. */
  private static Double cpuPercent() {
    if (ManagementFactory.getOperatingSystemMXBean()
        instanceof com.sun.management.OperatingSystemMXBean os) {
      double load = os.getProcessCpuLoad();
      return load < 0 ? null : Math.round(load * 1000) / 10.0;
    }
    return null;
  }
}
