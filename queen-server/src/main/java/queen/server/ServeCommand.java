package queen.server;

import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import picocli.CommandLine.Command;

/** {@code queen serve}: runs the broker until SIGTERM or Ctrl-C. */
@Command(
    name = "serve",
    mixinStandardHelpOptions = true,
    description = "Start the broker against PostgreSQL (migrating its schema first).",
    footer = {
      "",
      "Environment:",
      "  PORT            port to listen on (default 6632)",
      "  HOST            address to listen on (default 0.0.0.0)",
      "  PG_HOST         PostgreSQL host (default localhost)",
      "  PG_PORT         PostgreSQL port (default 5432)",
      "  PG_USER         PostgreSQL user (default postgres)",
      "  PG_PASSWORD     PostgreSQL password (default empty)",
      "  PG_DB           PostgreSQL database (default postgres)",
      "  DB_POOL_SIZE    most connections the broker opens for pushes, pops and acks",
      "                  (default 20)",
      "  QUEEN_ADMIN_POOL_SIZE  connections, apart from DB_POOL_SIZE, for the admin",
      "                  routes' heavier work: resource views, message browsing,",
      "                  dead-letter and trace pages and requeues, dead-letter moves,",
      "                  consumer-group views and the lag snapshot, analytics, queue",
      "                  and message deletes, queue clears (default 2)",
      "  QUEEN_ADMIN_STATEMENT_TIMEOUT_MS  longest one statement of an admin read",
      "                  may run before it is cancelled and answered 503 (default",
      "                  10000; 0: no limit); queue and message deletes are never cut",
      "  MAX_BODY_BYTES  largest request body accepted (default 67108864)",
      "  QUEEN_CORS_ORIGINS  web pages whose scripts may call the broker: * (any,",
      "                  the default), none, or origins such as https://app.example.com",
      "                  separated by commas; a page of another origin gets 403",
      "  QUEEN_MAX_PUSH_ITEMS     most items in one push, and operations and items",
      "                  in one transaction (default 10000)",
      "  QUEEN_MAX_PAYLOAD_BYTES  largest payload of one item (default 10485760)",
      "  QUEEN_POP_MAX_BYTES  message bytes after which a pop, or a page of dead",
      "                  letters, takes no more; it ends with the one that crosses",
      "                  (default 16777216)",
      "  QUEEN_SEGMENT_CACHE_MB  heap for pushes a pop took only part of, decoded",
      "                  once for the pops that take the rest (default 16, or a quarter",
      "                  of a smaller heap's; 0: off; at most a quarter of the heap)",
      "  QUEEN_PUSH_CONCURRENCY  most push calls to PostgreSQL at once, at most",
      "                  DB_POOL_SIZE (default 2, or DB_POOL_SIZE when smaller); pushes",
      "                  arriving meanwhile are merged into the next call",
      "  QUEEN_ACK_CONCURRENCY  the same for acks (default 2, at most DB_POOL_SIZE)",
      "  QUEEN_SWEEP_INTERVAL_MS  how often messages past maxWaitTimeSeconds are",
      "                  dead-lettered (default 5000; Queen's EVICTION_INTERVAL too),",
      "                  the brokers of a database in turns; after a slow scan the",
      "                  next starts about nine times its time later (at most 9 min)",
      "  RETENTION_INTERVAL  ms between retention cycles, which delete segments and",
      "                  dead letters past their queue's retention (default 300000)",
      "  RETENTION_BATCH_SIZE  segments (or dead letters, or a queue delete's",
      "                  partitions) deleted per short transaction, by retention and",
      "                  by a queue delete or clear (default 1000)",
      "  RETENTION_BATCH_MB  most segment MiB retention deletes per transaction, at",
      "                  least one segment (default 16)",
      "  RETENTION_VACUUM  auto (default): VACUUM the broker's tables after each cycle",
      "                  when the server's autovacuum is off; on; off",
      "  PARTITION_CLEANUP_DAYS  days after which a partition that retains no message",
      "                  and saw no push, pop or ack is removed with its cursors",
      "                  (default 30; 0: never; 0.5: 12 hours); a later push creates it",
      "                  again",
      "  ANALYZE_INTERVAL  ms between checks of the broker's tables past autovacuum's",
      "                  thresholds, vacuumed (unless RETENTION_VACUUM=off) and",
      "                  analyzed while the server's autovacuum is off (default",
      "                  15000; 0: never)",
      "  QUEEN_STATE_REFRESH_MS   how often pop maintenance mode, minimum pop waits",
      "                  and consumer-group seeks and deletes made on other brokers",
      "                  are re-read (default 1000)",
      "  QUEEN_STATS_INTERVAL_MS  how often message counts are written to the",
      "                  per-minute statistics and the per-queue counts refreshed",
      "                  (default 5000)",
      "  QUEEN_HOTLIST   1 (default): pick pop candidates from the in-memory hot-list;",
      "                  0: by SQL scan",
      "  QUEEN_HINTS     true (default): tell other brokers of pushes, released leases",
      "                  and changed switches over LISTEN/NOTIFY; false behind a pooler",
      "                  that cannot keep a LISTEN session (the watch, backoff and",
      "                  refresh serve)",
      "  POP_WAIT_INITIAL_INTERVAL_MS, POP_WAIT_BACKOFF_THRESHOLD,",
      "  POP_WAIT_BACKOFF_MULTIPLIER, POP_WAIT_MAX_INTERVAL_MS",
      "                  long-poll backoff (defaults 100, 3, 2.0, 1000): parked pops",
      "                  of one partition or of a discovery filter, one refused a",
      "                  serving permit, and every pop with QUEEN_HOTLIST=0 re-check",
      "                  after the interval even if nothing woke them; for whole-queue",
      "                  pops the broker re-checks each queue's rings twice per",
      "                  POP_WAIT_MAX_INTERVAL_MS on their behalf",
      "  QUEEN_POP_MAX_TIMEOUT_MS  the longest a long-poll waits, whatever its timeout",
      "                  asks; it is then answered 204 (default 300000, 1000-86400000)",
      "  QUEEN_DEPARTURE_SCAN_MS  how often (Linux) the kernel's TCP table is read for",
      "                  long-poll clients that have disconnected, whose pops then stop",
      "                  waiting and claim nothing (default 1000; 0 off, else",
      "                  100-60000)",
      "  JWT_ENABLED     true: every route but the public ones (/health, the metrics,",
      "                  the dashboard) and JWT_SKIP_PATHS needs a bearer token",
      "                  (default false); with JWT_SECRET (32+ bytes; 48+ for",
      "                  HS384, 64+ for HS512),",
      "                  JWT_PUBLIC_KEY (PEM, RSA or Ed25519) or JWT_JWKS_URL, and",
      "                  optional JWT_ISSUER, JWT_AUDIENCE, JWT_CLOCK_SKEW, JWT_SKIP_PATHS,",
      "                  JWT_ALGORITHM, JWT_JWKS_REFRESH_INTERVAL, JWT_JWKS_TIMEOUT_MS,",
      "                  JWT_ROLES_CLAIM, JWT_ROLES_ARRAY_CLAIM, JWT_ROLE_ADMIN,",
      "                  JWT_ROLE_READ_WRITE, JWT_ROLE_READ_ONLY (docs/security.md)",
      "  FILE_BUFFER_DIR  the local push buffer of push maintenance and failover",
      "                  (default queen-buffer; one broker per directory)",
      "  QUEEN_BUFFER_MAX_MB  most the buffer holds on disk (default 1024)",
      "  QUEEN_PUSH_FAILOVER  true: buffer pushes that cannot reach PostgreSQL",
      "                  instead of answering 503 (default false)",
      "  TLS_CERT_FILE, TLS_KEY_FILE  PEM certificate chain and private key: serve",
      "                  HTTPS instead of HTTP",
      "  QUEEN_ENCRYPTION_KEY     64 hex characters: seals the payloads of queues",
      "                  configured with encryptionEnabled (AES-256-GCM)",
      "  QUEEN_ENCRYPTION_KEYS_OLD  comma-separated older keys, still used to open",
      "                  payloads they sealed (key rotation)",
      "",
      "  LOG_FORMAT      json: one JSON object per log line (default: text)",
      "  HOSTNAME        the broker's name in its statistics (default: the host's)",
      "  SHUTDOWN_TIMEOUT_MS  on SIGTERM, how long requests in flight may finish",
      "                  (default 10000); parked long-polls are answered 204 at once",
      "",
      "Stops cleanly on SIGTERM or Ctrl-C. Exit status 1 when the broker cannot",
      "start (PostgreSQL cannot be reached, the port is taken), 2 for an invalid",
      "setting. HOST, the TLS files' contents and the payload keys are checked",
      "once PostgreSQL is reached and migrated: with it down, their errors wait."
    })
public final class ServeCommand implements Callable<Integer> {
  private static final Logger log = LoggerFactory.getLogger("queen");

  /**
   * Tells the launcher that the AOT cache this JVM records (written when it stops) comes from a
   * broker that started: one recorded by a failed start holds a few classes only. Not after a
   * migration: that cache would hold Flyway's 459 classes, and every later start, which migrates
   * nothing, would load them (3 MB of an idle broker's memory); the next start records again.
   */
  private static void markServed(String mark) {
    if (mark == null || mark.isEmpty()) {
      return;
    }
    try {
      java.nio.file.Files.writeString(java.nio.file.Path.of(mark), "");
    } catch (java.io.IOException e) {
      log.warn("cannot write {}: the AOT cache will be recorded again: {}", mark, e.getMessage());
    }
  }

  @Override
  public Integer call() throws InterruptedException {
    BrokerConfig config;
    try {
      config = BrokerConfig.fromEnv(System.getenv());
    } catch (BrokerConfig.InvalidConfigException e) {
      System.err.println("queen: " + e.getMessage());
      return 2;
    }
    Broker broker;
    try {
      broker = Broker.start(config);
    } catch (BrokerConfig.InvalidConfigException e) {
      System.err.println("queen: " + e.getMessage());
      return 2;
    } catch (RuntimeException e) {
      // the failure and its root: the root alone named no port when the port was taken
      String top = e.getMessage();
      String root = rootMessage(e);
      log.error(
          "cannot start against {}: {}",
          config.db().describe(),
          top == null || top.equals(root) ? root : top + ": " + root);
      return 1;
    }
    log.info(
        "Queen {} listening on {}://{}:{} using database {}",
        Broker.version(),
        config.tls() == null ? "http" : "https",
        config.host(),
        broker.port(),
        config.db().describe());
    String mark = System.getenv("QUEEN_AOT_SERVED");
    if (!broker.migrated()) {
      markServed(mark);
    } else if (mark != null && !mark.isEmpty()) {
      log.info("this start migrated the schema: the next start records the AOT cache again");
    }
    CountDownLatch stopped = new CountDownLatch(1);
    Runtime.getRuntime()
        .addShutdownHook(
            new Thread(
                () -> {
                  broker.close();
                  log.info("Queen stopped");
                  stopped.countDown();
                },
                "queen-shutdown"));
    stopped.await();
    return 0;
  }

  private static String rootMessage(Throwable e) {
    Throwable t = e;
    while (t.getCause() != null) {
      t = t.getCause();
    }
    return t.getMessage() == null ? t.toString() : t.getMessage();
  }
}
