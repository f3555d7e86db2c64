package queen.server.store;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.SQLTransientConnectionException;
import java.sql.Statement;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.atomic.LongAdder;
import org.flywaydb.core.Flyway;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The broker's connection pool and schema.
 *
 * <p>Migrations run on every start under Flyway's advisory lock, so several brokers starting at
 * once against one database are harmless and an older schema is migrated forward. Everything that
 * talks to PostgreSQL goes through {@link #transaction} or {@link #autocommit}: a connection is
 * never held outside those calls, so a parked long-poll never pins one.
 */
public final class Database implements AutoCloseable {
  /** How long a call waits for a connection: with the database away, each call waits this long. */
  public static final Duration CONNECTION_TIMEOUT = Duration.ofSeconds(5);

  private final HikariDataSource pool;
  private final DbConfig config;
  private static final Logger log = LoggerFactory.getLogger(Database.class);

  private final LongAdder calls = new LongAdder();
  private final AtomicBoolean reachable = new AtomicBoolean(true);
  private volatile long downSince;

  private Database(HikariDataSource pool, DbConfig config) {
    this.pool = pool;
    this.config = config;
  }

  /** Opens the pool. It does not connect yet: the first use does, and fails if PG is down. */
  public static Database open(DbConfig config) {
    return open(config, "queen", Math.min(2, config.poolSize()), Duration.ZERO);
  }

  /**
   * Opens a pool named {@code name}, which is also its connections' application_name in
   * pg_stat_activity, that keeps {@code minIdle} connections open while idle (more are closed after
   * ten idle minutes), and whose statements PostgreSQL cancels after {@code statementTimeout}
   * (zero: never) but in {@link #unbounded} transactions.
   */
  public static Database open(
      DbConfig config, String name, int minIdle, Duration statementTimeout) {
    HikariConfig hikari = new HikariConfig();
    hikari.setPoolName(name);
    hikari.setJdbcUrl(config.jdbcUrl());
    hikari.setUsername(config.user());
    hikari.setPassword(config.password());
    hikari.setMaximumPoolSize(config.poolSize());
    hikari.setMinimumIdle(minIdle);
    hikari.setConnectionTimeout(CONNECTION_TIMEOUT.toMillis());
    hikari.setInitializationFailTimeout(-1);
    hikari.addDataSourceProperty("ApplicationName", name);
    hikari.addDataSourceProperty("tcpKeepAlive", "true");
    hikari.addDataSourceProperty("socketFactory", KeepAliveSockets.class.getName());
    if (!statementTimeout.isZero()) {
      hikari.setConnectionInitSql("set statement_timeout = " + statementTimeout.toMillis());
    }
    return new Database(new HikariDataSource(hikari), config);
  }

  /**
   * Creates or migrates the queen schema to this build's version. When the schema already is this
   * build's (its stored migration fingerprint matches), one query says so and Flyway is skipped.
   * Answers whether Flyway ran.
   */
  public boolean migrate() {
    String fingerprint = MigrationFingerprint.of(Database.class.getClassLoader());
    if (fingerprint.equals(storedFingerprint())) {
      return false;
    }
    Flyway.configure()
        // connections of its own: Flyway holds up to three at once, more than a DB_POOL_SIZE of 1
        // or 2 has, and a start waited for them until it failed
        .dataSource(config.jdbcUrl(), config.user(), config.password())
        // about a second a try: a broker started while another runs a long migration (V12's ids,
        // a Citus redistribution) gave up after 50 s
        .lockRetryCount(900)
        .schemas("queen")
        .createSchemas(true)
        .locations("classpath:db/migration")
        .load()
        .migrate();
    autocommit(
        c -> {
          try (PreparedStatement ps =
              c.prepareStatement(
                  "insert into queen.system_state (key, value, updated_at)"
                      + " values ('schema_fingerprint', jsonb_build_object('sha256', ?::text), now())"
                      + " on conflict (key) do update set value = excluded.value,"
                      + " updated_at = excluded.updated_at")) {
            ps.setString(1, fingerprint);
            ps.executeUpdate();
          }
          return null;
        });
    return true;
  }

  /**
   * The fingerprint stored by the last migration, or null (no schema yet, an older build, or a
   * database whose Citus extension came or went since).
   */
  private String storedFingerprint() {
    try (Connection c = pool.getConnection();
        PreparedStatement ps =
            c.prepareStatement(
                "select value ->> 'sha256' from queen.system_state"
                    + " where key = 'schema_fingerprint'"
                    // a database distributed by hand since (it got Citus) migrates again, and
                    // the migration's end (afterMigrate) pins the new answer
                    + " and queen.distributed()"
                    + " = exists (select 1 from pg_extension where extname = 'citus')");
        ResultSet rs = ps.executeQuery()) {
      return rs.next() ? rs.getString(1) : null;
    } catch (SQLException e) {
      // a pool's own timeout has no SQLSTATE: List.contains(null) threw, and a start against a
      // server that did not answer said only "NullPointerException"
      if (e.getSQLState() != null && List.of("42P01", "3F000", "42883").contains(e.getSQLState())) {
        return null; // no queen schema yet, or one older than queen.distributed()
      }
      throw StoreException.from(e);
    }
  }

  /** Units of database work run so far (transactions and autocommit calls), for metrics. */
  public long calls() {
    return calls.sum();
  }

  /** The pool's connections now: in use, idle, and requests waiting for one. */
  public record PoolState(int active, int idle, int waiting) {}

  public PoolState poolState() {
    var mx = pool.getHikariPoolMXBean();
    return mx == null
        ? new PoolState(0, 0, 0)
        : new PoolState(
            mx.getActiveConnections(), mx.getIdleConnections(), mx.getThreadsAwaitingConnection());
  }

  /** An answer of {@link #ping()}, and when it was had (System.nanoTime). */
  private record Pinged(boolean up, long atNanos) {}

  private static final long PING_KEPT_NANOS = TimeUnit.SECONDS.toNanos(1);
  private volatile Pinged pinged = new Pinged(false, System.nanoTime() - 2 * PING_KEPT_NANOS);
  private final AtomicReference<CompletableFuture<Boolean>> pinging = new AtomicReference<>();

  /**
   * True when PostgreSQL answers a trivial query within the pool's connection timeout and takes
   * writes (not a standby, not read-only: a primary demoted in a failover answers). Asked once for
   * every caller at a time, and an answer under a second old is given again: {@code GET /health}
   * needs no token, and a flood of it took a pool connection per request from the pushes and pops.
   */
  public boolean ping() {
    Pinged last = pinged;
    if (System.nanoTime() - last.atNanos() < PING_KEPT_NANOS) {
      return last.up();
    }
    CompletableFuture<Boolean> mine = new CompletableFuture<>();
    CompletableFuture<Boolean> running = pinging.compareAndExchange(null, mine);
    if (running != null) {
      return running.join();
    }
    try {
      boolean up = pingNow();
      pinged = new Pinged(up, System.nanoTime());
      mine.complete(up);
      return up;
    } catch (RuntimeException | Error e) {
      mine.completeExceptionally(e); // never left pending: every caller joins it
      throw e;
    } finally {
      pinging.set(null);
    }
  }

  private boolean pingNow() {
    try {
      return autocommit(
          c -> {
            try (var st = c.createStatement()) {
              st.setQueryTimeout(2);
              // a standby or a read-only database answers, and refuses every push and ack
              try (var rs =
                  st.executeQuery(
                      "select not pg_is_in_recovery()"
                          + " and current_setting('transaction_read_only') = 'off'")) {
                return rs.next() && rs.getBoolean(1);
              }
            }
          });
    } catch (StoreException e) {
      return false;
    }
  }

  /** Runs work in one transaction: committed when it returns, rolled back when it throws. */
  <T> T transaction(SqlWork<T> work) {
    calls.increment();
    try (Connection c = pool.getConnection()) {
      c.setAutoCommit(false);
      try {
        T result = work.run(c);
        c.commit();
        reached();
        return result;
      } catch (SQLException | RuntimeException e) {
        rollbackQuietly(c, e);
        throw e;
      } finally {
        autocommitAgain(c);
      }
    } catch (SQLException e) {
      throw failed(e);
    }
  }

  /**
   * Puts a connection back in autocommit; on one the server closed, whose error would take the
   * place of the work's own (a 57P01 read as an outage, 503, became an error without SQLSTATE,
   * 500), nothing: the pool drops it, and resets what it hands out again anyway.
   */
  private static void autocommitAgain(Connection c) {
    try {
      if (!c.isClosed()) {
        c.setAutoCommit(true);
      }
    } catch (SQLException e) {
      log.debug("a connection could not be put back in autocommit: {}", e.toString());
    }
  }

  /**
   * As {@link #transaction}, free of the pool's statement timeout: for writes that must finish once
   * begun (a queue delete), which a cancel would roll back whole, every retry again.
   */
  <T> T unbounded(SqlWork<T> work) {
    return transaction(
        c -> {
          try (Statement st = c.createStatement()) {
            st.execute("set local statement_timeout = 0");
          }
          return work.run(c);
        });
  }

  /** Runs work on a connection in autocommit mode: each statement is its own transaction. */
  <T> T autocommit(SqlWork<T> work) {
    calls.increment();
    return uncounted(work);
  }

  /**
   * As {@link #autocommit}, not counted in {@link #calls()}: for the hints between brokers, which
   * are not work a request asked for (a pop in maintenance mode does no database work, while the
   * switch's hint may still be on its way out).
   */
  <T> T uncounted(SqlWork<T> work) {
    try (Connection c = pool.getConnection()) {
      T result = work.run(c);
      reached();
      return result;
    } catch (SQLException e) {
      throw failed(e);
    }
  }

  /**
   * Classifies a failure; the first one of an outage is logged once, at WARN, without a stack trace
   * (each request or task that meets the outage logs at DEBUG only).
   */
  private StoreException failed(SQLException e) {
    if (pool.isClosed() && e.getSQLState() == null) {
      // the broker is stopping: a request past SHUTDOWN_TIMEOUT_MS meets a closed pool, whose
      // error has no SQLSTATE and answered 500 (under push failover, unbuffered) instead of 503
      e = new SQLTransientConnectionException("the broker is shutting down", "57P01", e);
    }
    StoreException s = StoreException.from(e);
    if (s.outage() && reachable.compareAndSet(true, false)) {
      downSince = System.nanoTime();
      log.warn("database unreachable: {}", e.getMessage());
    }
    return s;
  }

  private void reached() {
    if (!reachable.get() && reachable.compareAndSet(false, true)) {
      log.info(
          "database reachable again after {} ms",
          TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - downSince));
    }
  }

  private static void rollbackQuietly(Connection c, Exception cause) {
    try {
      c.rollback();
    } catch (SQLException e) {
      cause.addSuppressed(e);
    }
  }

  @Override
  public void close() {
    pool.close();
  }

  /** A unit of JDBC work. */
  @FunctionalInterface
  interface SqlWork<T> {
    T run(Connection c) throws SQLException;
  }
}
