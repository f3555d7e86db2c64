package queen.server;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import queen.server.codec.PayloadCipher;
import queen.server.http.Cors;
import queen.server.http.PushLimits;
import queen.server.http.auth.AuthSettings;
import queen.server.http.auth.TokenVerifier;
import queen.server.ops.Retention;
import queen.server.pop.WaitPolicy;
import queen.server.store.DbConfig;

/**
 * Everything the broker reads from its environment, read once at start. The variable names are
 * Queen's (PG_HOST, PORT, ...), so a deployment of Queen carries over. An invalid value stops the
 * broker with a message naming the variable.
 *
 * @param host HOST, the address to listen on
 * @param port PORT, 0 for any free port
 * @param maxBodyBytes MAX_BODY_BYTES, the largest request body accepted (413 beyond)
 * @param cors QUEEN_CORS_ORIGINS, the web pages whose scripts may call the broker
 * @param sweepInterval QUEEN_SWEEP_INTERVAL_MS (or Queen's EVICTION_INTERVAL), how often messages
 *     past their queue's maxWaitTimeSeconds are moved to the dead letters
 * @param stateRefresh QUEEN_STATE_REFRESH_MS, how often the cluster-wide switches (pop maintenance,
 *     minimum pop waits) and the consumer-group resets made on other brokers are re-read
 * @param hotList QUEEN_HOTLIST, 0 to pick pop candidates by SQL scan instead of the hot-list
 * @param hints QUEEN_HINTS, false to neither send nor hear hints between brokers (LISTEN/NOTIFY),
 *     for a connection pooler that cannot keep a LISTEN session; the floor then serves alone
 * @param popWait the long-poll backoff, POP_WAIT_*
 * @param popMaxTimeout QUEEN_POP_MAX_TIMEOUT_MS, the longest a long-poll waits whatever its {@code
 *     timeout} asks; it then answers 204 as at its own deadline
 * @param popMaxBytes QUEEN_POP_MAX_BYTES, the decoded message bytes after which a pop takes no
 *     more; it ends with the message that crosses, so a bigger one still goes out. A page of dead
 *     letters ends the same way
 * @param segmentCacheBytes QUEEN_SEGMENT_CACHE_MB, the heap that decoded segments a pop took only
 *     part of may hold for the pops that take the rest (zero: none kept)
 * @param departureScan QUEEN_DEPARTURE_SCAN_MS, how often the kernel's TCP table is read for
 *     long-poll clients that have gone; zero never
 * @param retention RETENTION_INTERVAL, RETENTION_BATCH_SIZE, RETENTION_BATCH_MB, RETENTION_VACUUM,
 *     PARTITION_CLEANUP_DAYS
 * @param analyzeInterval ANALYZE_INTERVAL, how often the broker's tables are checked against
 *     autovacuum's thresholds, vacuumed and analyzed while the server's autovacuum is off (zero:
 *     never)
 * @param statsInterval QUEEN_STATS_INTERVAL_MS, how often each broker adds its message counts to
 *     the per-minute statistics and one broker refreshes the per-queue snapshot
 * @param auth JWT_*, bearer-token authentication (off by default)
 * @param pushLimits QUEEN_MAX_PUSH_ITEMS and QUEEN_MAX_PAYLOAD_BYTES
 * @param pushConcurrency QUEEN_PUSH_CONCURRENCY, the most push calls to PostgreSQL at once; pushes
 *     that arrive meanwhile are merged into the next call
 * @param ackConcurrency QUEEN_ACK_CONCURRENCY, the same for acks
 * @param adminPoolSize QUEEN_ADMIN_POOL_SIZE, the connections, apart from DB_POOL_SIZE's, of the
 *     pool for the admin routes' heavier work: resource views, message browsing and deletes,
 *     consumer-group views and the lag snapshot, analytics, queue deletes and clears
 * @param adminStatementTimeout QUEEN_ADMIN_STATEMENT_TIMEOUT_MS, the longest one statement of an
 *     admin read may run (zero: no limit); the admin writes (queue deletes and clears, message
 *     deletes) are not cut, for a cut rolls them back whole
 * @param cipher QUEEN_ENCRYPTION_KEY and QUEEN_ENCRYPTION_KEYS_OLD, payload encryption at rest;
 *     null when neither is set
 * @param tls TLS_CERT_FILE and TLS_KEY_FILE, HTTPS on the listener; null for plain HTTP
 * @param buffer FILE_BUFFER_DIR, QUEEN_BUFFER_MAX_MB and QUEEN_PUSH_FAILOVER, the local push buffer
 *     of maintenance mode and failover
 * @param shutdownTimeout SHUTDOWN_TIMEOUT_MS, how long a stopping broker lets requests in flight
 *     finish
 */
public record BrokerConfig(
    String host,
    int port,
    DbConfig db,
    long maxBodyBytes,
    Cors cors,
    Duration sweepInterval,
    Duration stateRefresh,
    boolean hotList,
    boolean hints,
    WaitPolicy popWait,
    Duration popMaxTimeout,
    long popMaxBytes,
    long segmentCacheBytes,
    Duration departureScan,
    Retention.Settings retention,
    Duration analyzeInterval,
    Duration statsInterval,
    AuthSettings auth,
    PushLimits pushLimits,
    int pushConcurrency,
    int ackConcurrency,
    int adminPoolSize,
    Duration adminStatementTimeout,
    PayloadCipher cipher,
    TlsFiles tls,
    Buffer buffer,
    Duration shutdownTimeout) {

  /**
   * @param dir where buffered pushes are written (one broker per directory)
   * @param maxBytes the most the buffer may hold on disk; beyond it pushes that would be buffered
   *     are refused with 503
   * @param failover buffer pushes that cannot reach PostgreSQL instead of answering 503
   */
  public record Buffer(Path dir, long maxBytes, boolean failover) {}

  /** The PEM files of the listener's certificate chain and its private key. */
  public record TlsFiles(Path certificate, Path key) {}

  public static BrokerConfig fromEnv(Map<String, String> env) {
    EnvReader r = new EnvReader(env);
    DbConfig db =
        new DbConfig(
            r.string("PG_HOST", "localhost"),
            r.integer("PG_PORT", 5432, 1, 65_535),
            r.string("PG_USER", "postgres"),
            env.getOrDefault("PG_PASSWORD", ""),
            r.string("PG_DB", "postgres"),
            r.integer("DB_POOL_SIZE", 20, 1, 10_000));
    return new BrokerConfig(
        r.string("HOST", "0.0.0.0"),
        r.integer("PORT", 6632, 0, 65_535),
        db,
        r.integer("MAX_BODY_BYTES", 64 << 20, 1024, Integer.MAX_VALUE),
        cors(r),
        Duration.ofMillis(
            r.integer(
                "QUEEN_SWEEP_INTERVAL_MS",
                r.integer("EVICTION_INTERVAL", 5_000, 10, 3_600_000),
                10,
                3_600_000)),
        Duration.ofMillis(r.integer("QUEEN_STATE_REFRESH_MS", 1_000, 10, 3_600_000)),
        r.integer("QUEEN_HOTLIST", 1, 0, 1) == 1,
        r.bool("QUEEN_HINTS", true),
        popWait(r),
        // a client that vanished without closing its connection (power, network) holds its
        // long-poll to the deadline it asked for: an int timeout is up to 24 days
        Duration.ofMillis(r.integer("QUEEN_POP_MAX_TIMEOUT_MS", 300_000, 1_000, 86_400_000)),
        // a pop holds about three times its bytes at once (blobs, decoded frames, the answer):
        // 16 MiB lets about twenty big pops share the launcher's 1 GiB heap cap, where batch x
        // QUEEN_MAX_PAYLOAD_BYTES (10,000 x 10 MiB) could claim more than any heap holds
        r.integer("QUEEN_POP_MAX_BYTES", 16 << 20, 1024, 1 << 30),
        segmentCacheBytes(env, Runtime.getRuntime().maxMemory() >> 20),
        departureScan(r),
        new Retention.Settings(
            Duration.ofMillis(r.integer("RETENTION_INTERVAL", 300_000, 100, 86_400_000)),
            r.integer("RETENTION_BATCH_SIZE", 1_000, 1, 1_000_000),
            r.integer("RETENTION_BATCH_MB", 16, 1, 1 << 20) * 1_048_576L,
            r.choice("RETENTION_VACUUM", Retention.Vacuum.AUTO),
            // days as in Queen; a fraction for queues whose partitions are done with in hours
            Duration.ofMillis(
                Math.round(r.decimal("PARTITION_CLEANUP_DAYS", 30, 0, 36_500) * 86_400_000))),
        Duration.ofMillis(r.integer("ANALYZE_INTERVAL", 15_000, 0, 86_400_000)),
        Duration.ofMillis(r.integer("QUEEN_STATS_INTERVAL_MS", 5_000, 100, 3_600_000)),
        auth(r, env),
        new PushLimits(
            r.integer("QUEEN_MAX_PUSH_ITEMS", PushLimits.DEFAULT.maxItems(), 1, 1_000_000),
            r.integer(
                "QUEEN_MAX_PAYLOAD_BYTES",
                PushLimits.DEFAULT.maxPayloadBytes(),
                1,
                Integer.MAX_VALUE)),
        // 2: on a 2-core PostgreSQL, pushes merged over 2 calls pushed 15-20% more than over 4,
        // acks 1-40% (docs/benchmarks.md); the merged calls of a busy broker grow instead
        r.integer("QUEEN_PUSH_CONCURRENCY", Math.min(2, db.poolSize()), 1, db.poolSize()),
        r.integer("QUEEN_ACK_CONCURRENCY", Math.min(2, db.poolSize()), 1, db.poolSize()),
        // apart: a dashboard's reads never take a connection from pushes and pops, and few
        // connections each plan the admin functions once (a first call on a connection costs
        // 35-65 ms of planning; 20 of them were the admin bench's p99)
        r.integer("QUEEN_ADMIN_POOL_SIZE", 2, 1, 1_000),
        // a page of the admin bench takes at most 0.2 s under load; a read past 10 s is a filter
        // the broker cannot serve well (a deep offset over 10,000 partitions), and without a
        // limit one ran for 10 minutes holding one of the two admin connections
        Duration.ofMillis(r.integer("QUEEN_ADMIN_STATEMENT_TIMEOUT_MS", 10_000, 0, 3_600_000)),
        cipher(r),
        tls(r),
        new Buffer(
            Path.of(r.string("FILE_BUFFER_DIR", "queen-buffer")),
            r.integer("QUEEN_BUFFER_MAX_MB", 1024, 1, 1 << 20) * 1_048_576L,
            r.bool("QUEEN_PUSH_FAILOVER", false)),
        Duration.ofMillis(r.integer("SHUTDOWN_TIMEOUT_MS", 10_000, 0, 600_000)));
  }

  private static Cors cors(EnvReader r) {
    try {
      return Cors.parse(r.string("QUEEN_CORS_ORIGINS", "*"));
    } catch (IllegalArgumentException e) {
      throw new InvalidConfigException("QUEEN_CORS_ORIGINS: " + e.getMessage());
    }
  }

  private static TlsFiles tls(EnvReader r) {
    String cert = r.string("TLS_CERT_FILE", null);
    String key = r.string("TLS_KEY_FILE", null);
    if (cert == null && key == null) {
      return null;
    }
    if (cert == null || key == null) {
      throw new InvalidConfigException(
          "TLS_CERT_FILE and TLS_KEY_FILE go together: set both or neither");
    }
    for (String[] file : new String[][] {{"TLS_CERT_FILE", cert}, {"TLS_KEY_FILE", key}}) {
      if (!Files.isReadable(Path.of(file[1]))) {
        throw new InvalidConfigException(file[0] + " " + file[1] + " is not a readable file");
      }
    }
    return new TlsFiles(Path.of(cert), Path.of(key));
  }

  private static PayloadCipher cipher(EnvReader r) {
    String current = r.string("QUEEN_ENCRYPTION_KEY", null);
    String old = r.string("QUEEN_ENCRYPTION_KEYS_OLD", null);
    if (current == null && old == null) {
      return null;
    }
    byte[] key = null;
    if (current != null) {
      try {
        key = PayloadCipher.parseHexKey(current);
      } catch (IllegalArgumentException e) {
        throw new InvalidConfigException("QUEEN_ENCRYPTION_KEY " + e.getMessage());
      }
    }
    List<byte[]> olds = new ArrayList<>();
    if (old != null) {
      String[] parts = old.split(",");
      for (int i = 0; i < parts.length; i++) {
        try {
          olds.add(PayloadCipher.parseHexKey(parts[i]));
        } catch (IllegalArgumentException e) {
          throw new InvalidConfigException(
              "QUEEN_ENCRYPTION_KEYS_OLD entry " + (i + 1) + " " + e.getMessage());
        }
      }
    }
    return new PayloadCipher(key, olds);
  }

  private static AuthSettings auth(EnvReader r, Map<String, String> env) {
    AuthSettings off = AuthSettings.disabled();
    String skip = env.get("JWT_SKIP_PATHS");
    String jwks = r.string("JWT_JWKS_URL", null);
    AuthSettings s =
        new AuthSettings(
            r.bool("JWT_ENABLED", false),
            r.string("JWT_ALGORITHM", "auto").equalsIgnoreCase("auto")
                ? null
                : r.string("JWT_ALGORITHM", null),
            r.string("JWT_SECRET", null),
            r.string("JWT_PUBLIC_KEY", null),
            jwks == null ? null : r.uri("JWT_JWKS_URL", jwks),
            Duration.ofSeconds(r.integer("JWT_JWKS_REFRESH_INTERVAL", 3_600, 1, 86_400 * 7)),
            Duration.ofMillis(r.integer("JWT_JWKS_TIMEOUT_MS", 5_000, 100, 60_000)),
            r.string("JWT_ISSUER", null),
            r.string("JWT_AUDIENCE", null),
            Duration.ofSeconds(r.integer("JWT_CLOCK_SKEW", 30, 0, 3_600)),
            skip == null
                ? off.skipPaths()
                : Arrays.stream(skip.split(","))
                    .map(String::trim)
                    .filter(p -> !p.isEmpty())
                    .toList(),
            r.string("JWT_ROLES_CLAIM", off.roleClaim()),
            r.string("JWT_ROLES_ARRAY_CLAIM", off.rolesClaim()),
            r.string("JWT_ROLE_ADMIN", off.adminRole()),
            r.string("JWT_ROLE_READ_WRITE", off.readWriteRole()),
            r.string("JWT_ROLE_READ_ONLY", off.readOnlyRole()));
    if (s.enabled()) {
      try {
        s.checkSkipPaths();
        TokenVerifier.create(s);
      } catch (IllegalArgumentException e) {
        throw new InvalidConfigException(e.getMessage());
      }
    }
    return s;
  }

  /**
   * QUEEN_SEGMENT_CACHE_MB of {@code env} in bytes for a heap of {@code heapMb}: at most a quarter
   * of it, which pops need for the rest; unset, 16 MiB or that quarter.
   */
  public static long segmentCacheBytes(Map<String, String> env, long heapMb) {
    // the default fits a small heap too: 16 MiB refused to start a 256 MiB container's broker,
    // whose heap the JVM caps near 64 MiB
    int mb =
        new EnvReader(env)
            .integer("QUEEN_SEGMENT_CACHE_MB", (int) Math.min(16, heapMb / 4), 0, 65_536);
    if (mb > heapMb / 4) {
      throw new InvalidConfigException(
          "QUEEN_SEGMENT_CACHE_MB "
              + mb
              + " is more than a quarter of the heap ("
              + heapMb
              + " MiB): lower it, or raise the heap with -Xmx in JAVA_OPTS");
    }
    return (long) mb << 20;
  }

  private static Duration departureScan(EnvReader r) {
    int ms = r.integer("QUEEN_DEPARTURE_SCAN_MS", 1_000, 0, 60_000);
    if (ms > 0 && ms < 100) {
      // each read walks every TCP connection in the kernel
      throw new InvalidConfigException(
          "QUEEN_DEPARTURE_SCAN_MS (" + ms + ") must be 0 (off) or at least 100");
    }
    return Duration.ofMillis(ms);
  }

  private static WaitPolicy popWait(EnvReader r) {
    int initial = r.integer("POP_WAIT_INITIAL_INTERVAL_MS", 100, 1, 60_000);
    int max = r.integer("POP_WAIT_MAX_INTERVAL_MS", 1_000, 1, 600_000);
    if (max < initial) {
      throw new InvalidConfigException(
          "POP_WAIT_MAX_INTERVAL_MS ("
              + max
              + ") must not be below POP_WAIT_INITIAL_INTERVAL_MS ("
              + initial
              + ")");
    }
    return new WaitPolicy(
        initial,
        r.integer("POP_WAIT_BACKOFF_THRESHOLD", 3, 0, 1_000),
        r.decimal("POP_WAIT_BACKOFF_MULTIPLIER", 2.0, 1.0, 100.0),
        max);
  }

  /** A configuration value the broker cannot start with. */
  public static final class InvalidConfigException extends RuntimeException {
    InvalidConfigException(String message) {
      super(message);
    }
  }
}
