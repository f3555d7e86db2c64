package queen.server;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpHeaders;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.util.HashMap;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.ThreadLocalRandom;
import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.ExtensionContext;
import queen.server.store.DbConfig;

/**
 * A real broker on a free port over a real PostgreSQL database created for one test class and
 * dropped after it, so test classes share nothing and run in any order. Register it as a static
 * field with {@code @RegisterExtension}.
 *
 * <p>The server is reached the way clients reach it: HTTP over a socket. Assertions about stored
 * state read PostgreSQL directly through {@link #sql}.
 */
public final class TestBroker implements BeforeAllCallback, AfterAllCallback {
  public static final ObjectMapper JSON = new ObjectMapper();

  /**
   * The broker's timed database work off (switch refresh, sweeper, statistics, planner statistics),
   * for a test that counts the database calls of its requests: on a loaded machine a window that
   * stretched took in background calls too.
   */
  public static final Map<String, String> QUIET_TIMERS =
      Map.of(
          "QUEEN_STATE_REFRESH_MS", "3600000",
          "QUEEN_SWEEP_INTERVAL_MS", "3600000",
          "QUEEN_STATS_INTERVAL_MS", "3600000",
          "ANALYZE_INTERVAL", "0");

  /** {@link #QUIET_TIMERS} and the extra environment given. */
  public static Map<String, String> quiet(Map<String, String> env) {
    Map<String, String> all = new HashMap<>(QUIET_TIMERS);
    all.putAll(env);
    return all;
  }

  private final HttpClient http =
      HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
  private final Map<String, String> env;
  private final boolean onCitus;
  private CitusCluster citus;
  private DbConfig db;
  private Broker broker;

  public TestBroker() {
    this(Map.of());
  }

  /** Extra environment for the broker, as if set in the shell. */
  public TestBroker(Map<String, String> env) {
    this(env, false);
  }

  private TestBroker(Map<String, String> env, boolean onCitus) {
    this.env = env;
    this.onCitus = onCitus;
  }

  /**
   * A broker on a database of the Citus cluster that {@code QUEEN_TEST_CITUS_URL} names; the class
   * using it is skipped when the variable is not set.
   */
  public static TestBroker onCitus(Map<String, String> env) {
    return new TestBroker(env, true);
  }

  /** Connection settings of the local PostgreSQL, from the same PG_* variables the broker uses. */
  public static DbConfig localDb(String database) {
    Map<String, String> e = System.getenv();
    return new DbConfig(
        e.getOrDefault("PG_HOST", "127.0.0.1"),
        Integer.parseInt(e.getOrDefault("PG_PORT", "5432")),
        e.getOrDefault("PG_USER", "postgres"),
        e.getOrDefault("PG_PASSWORD", ""),
        database,
        8);
  }

  @Override
  public void beforeAll(ExtensionContext context) throws Exception {
    String name =
        "queen_t_"
            + context.getRequiredTestClass().getSimpleName().toLowerCase(Locale.ROOT)
            + "_"
            + Integer.toHexString(ThreadLocalRandom.current().nextInt(1 << 24));
    if (onCitus) {
      citus = CitusCluster.configured().orElseThrow();
      db = citus.createDatabase(name);
    } else {
      db = createDatabase(name);
    }
    broker = Broker.start(config());
  }

  @Override
  public void afterAll(ExtensionContext context) throws Exception {
    if (broker != null) {
      broker.close();
    }
    if (citus != null) {
      citus.dropDatabase(db.database());
    } else if (db != null) {
      dropDatabase(db.database());
    }
  }

  /** The configuration the broker runs with: the class's database, any free port. */
  public BrokerConfig config() {
    return configFor(db, env);
  }

  /** A broker on the given database and any free port of the loopback interface. */
  public static BrokerConfig configFor(DbConfig db, Map<String, String> env) {
    Map<String, String> vars = new java.util.HashMap<>(env);
    vars.putIfAbsent("PG_HOST", db.host());
    vars.putIfAbsent("PG_PORT", Integer.toString(db.port()));
    vars.put("PG_USER", db.user());
    vars.put("PG_PASSWORD", db.password());
    vars.put("PG_DB", db.database());
    vars.putIfAbsent("PORT", "0");
    vars.putIfAbsent("HOST", "127.0.0.1");
    if (!vars.containsKey("FILE_BUFFER_DIR")) {
      try {
        // one buffer directory per broker: a directory is owned by one broker at a time
        Path dir = java.nio.file.Files.createTempDirectory("queen-buffer");
        dir.toFile().deleteOnExit();
        vars.put("FILE_BUFFER_DIR", dir.toString());
      } catch (IOException e) {
        throw new java.io.UncheckedIOException(e);
      }
    }
    return BrokerConfig.fromEnv(vars);
  }

  public DbConfig db() {
    return db;
  }

  public int port() {
    return broker.port();
  }

  /** Starts another broker on the same database, for multi-broker tests; the caller closes it. */
  public Broker startAnother() {
    return Broker.start(config());
  }

  /** Another broker on the same database with its own environment; the caller closes it. */
  public Broker startAnother(Map<String, String> otherEnv) {
    return Broker.start(configFor(db, otherEnv));
  }

  /** GET from another broker on the same database. */
  public Reply get(Broker other, String path) {
    return send(
        HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + other.port() + path))
            .GET()
            .build());
  }

  /** A new database on the local server; on Citus when the local server is a coordinator. */
  public static DbConfig createDatabase(String name) throws SQLException {
    java.util.Optional<CitusCluster> cluster = CitusCluster.of(localDb("postgres"));
    if (cluster.isPresent()) {
      return cluster.get().createDatabase(name);
    }
    try (Connection c = admin();
        Statement st = c.createStatement()) {
      st.execute("create database " + name + " template template0");
    }
    return localDb(name);
  }

  public static void dropDatabase(String name) throws SQLException {
    java.util.Optional<CitusCluster> cluster = CitusCluster.of(localDb("postgres"));
    if (cluster.isPresent()) {
      cluster.get().dropDatabase(name);
      return;
    }
    try (Connection c = admin();
        Statement st = c.createStatement()) {
      st.execute("drop database if exists " + name + " with (force)");
    }
  }

  private static Connection admin() throws SQLException {
    DbConfig a = localDb("postgres");
    return DriverManager.getConnection(a.jdbcUrl(), a.user(), a.password());
  }

  /** A new JDBC connection to the class's database; the caller closes it. */
  public Connection connect() throws SQLException {
    return DriverManager.getConnection(db.jdbcUrl(), db.user(), db.password());
  }

  /** Runs a query and returns the first column of the first row as a long (0 if no row). */
  public long sqlLong(String query) {
    try (Connection c = connect();
        Statement st = c.createStatement();
        ResultSet rs = st.executeQuery(query)) {
      return rs.next() ? rs.getLong(1) : 0;
    } catch (SQLException e) {
      throw new IllegalStateException(query, e);
    }
  }

  /**
   * Bytes held by a table's row versions, live and dead (pgstattuple): what HOT pruning keeps
   * small. The file size is not that measure: on PostgreSQL 15 a moment of contention for the
   * relation extension lock adds 20 empty pages per waiting session at once, which later updates
   * reuse through the free space map.
   */
  public long rowVersionBytes(String table) {
    sql("create extension if not exists pgstattuple");
    return sqlLong("select tuple_len + dead_tuple_len from pgstattuple('" + table + "'::regclass)");
  }

  /** Update counts, row versions and file size of a table, for an assertion's message. */
  public String updateShape(String table) {
    sql("create extension if not exists pgstattuple");
    return sqlText(
        "select format('%s updates, %s HOT, %s live and %s dead versions in %s of %s bytes',"
            + " s.n_tup_upd, s.n_tup_hot_upd, t.tuple_count, t.dead_tuple_count,"
            + " t.tuple_len + t.dead_tuple_len, t.table_len)"
            + " from pg_stat_user_tables s, pgstattuple('"
            + table
            + "'::regclass) t where s.relid = '"
            + table
            + "'::regclass");
  }

  /** Runs a query and returns the first column of the first row as text (null if none). */
  public String sqlText(String query) {
    try (Connection c = connect();
        Statement st = c.createStatement();
        ResultSet rs = st.executeQuery(query)) {
      return rs.next() ? rs.getString(1) : null;
    } catch (SQLException e) {
      throw new IllegalStateException(query, e);
    }
  }

  /** Runs a query and returns the first column of the first row as an instant (null if none). */
  public Instant sqlInstant(String query) {
    try (Connection c = connect();
        Statement st = c.createStatement();
        ResultSet rs = st.executeQuery(query)) {
      return rs.next() && rs.getObject(1) != null
          ? rs.getObject(1, OffsetDateTime.class).toInstant()
          : null;
    } catch (SQLException e) {
      throw new IllegalStateException(query, e);
    }
  }

  /** Runs a statement. */
  public void sql(String statement) {
    try (Connection c = connect();
        Statement st = c.createStatement()) {
      st.execute(statement);
    } catch (SQLException e) {
      throw new IllegalStateException(statement, e);
    }
  }

  /** An HTTP answer: status, headers, and the body parsed as JSON (null when empty). */
  public record Reply(int status, HttpHeaders headers, String text) {
    public JsonNode json() {
      try {
        return text.isEmpty() ? null : JSON.readTree(text);
      } catch (IOException e) {
        throw new IllegalStateException("not JSON: " + text, e);
      }
    }
  }

  /** POST to another broker (started with {@link #startAnother()}) on the same database. */
  public Reply post(Broker other, String path, JsonNode body) {
    return send(
        HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + other.port() + path))
            .header("Content-Type", "application/json")
            .POST(HttpRequest.BodyPublishers.ofString(body.toString()))
            .build());
  }

  /**
   * The value of one series of the broker's Prometheus metrics, summed over every series of that
   * name whose labels contain {@code labels} (0 when none).
   */
  public double metric(String name, String labels) {
    return metric(startedBroker(), name, labels);
  }

  /** As {@link #metric(String, String)}, of another broker. */
  public double metric(Broker x, String name, String labels) {
    double sum = 0;
    for (String line : get(x, "/metrics/prometheus").text().split("\n")) {
      if (line.startsWith(name + "{") || line.startsWith(name + " ")) {
        String series = line.substring(0, line.lastIndexOf(' '));
        if (series.contains(labels)) {
          sum += Double.parseDouble(line.substring(line.lastIndexOf(' ') + 1));
        }
      }
    }
    return sum;
  }

  /** Sessions of the database server waiting for an advisory lock right now. */
  public long advisoryLockWaiters() {
    return sqlLong("select count(*) from pg_locks where locktype = 'advisory' and not granted");
  }

  /** Database calls this broker has made so far. */
  public long dbCalls() {
    return (long) metric("queen_db_calls_total", "");
  }

  /** The broker this extension started. */
  public Broker startedBroker() {
    return broker;
  }

  /** Every route the broker declared, with the access it requires. */
  public java.util.List<queen.server.http.RouteTable.Route> routes() {
    return broker.routes();
  }

  public Reply get(String path) {
    return send(HttpRequest.newBuilder(uri(path)).GET().build());
  }

  public Reply delete(String path) {
    return send(HttpRequest.newBuilder(uri(path)).DELETE().build());
  }

  public Reply post(String path, String body) {
    return send(
        HttpRequest.newBuilder(uri(path))
            .header("Content-Type", "application/json")
            .POST(HttpRequest.BodyPublishers.ofString(body))
            .build());
  }

  public Reply post(String path, JsonNode body) {
    return post(path, body.toString());
  }

  public Reply send(HttpRequest request) {
    try {
      HttpResponse<String> r = http.send(request, HttpResponse.BodyHandlers.ofString());
      return new Reply(r.statusCode(), r.headers(), r.body());
    } catch (IOException e) {
      throw new IllegalStateException(request.uri().toString(), e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException(e);
    }
  }

  /** A request with a body (null: none) and headers given as name, value, name, value... */
  public Reply send(String method, String path, String body, String... headers) {
    HttpRequest.Builder b =
        HttpRequest.newBuilder(uri(path))
            .method(
                method,
                body == null
                    ? HttpRequest.BodyPublishers.noBody()
                    : HttpRequest.BodyPublishers.ofString(body));
    for (int i = 0; i < headers.length; i += 2) {
      b.header(headers[i], headers[i + 1]);
    }
    return send(b.build());
  }

  public URI uri(String path) {
    return URI.create("http://127.0.0.1:" + broker.port() + path);
  }
}
