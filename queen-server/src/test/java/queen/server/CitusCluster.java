package queen.server;

import java.net.URI;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import queen.server.store.DbConfig;

/**
 * A Citus cluster for tests: a coordinator whose {@code postgres} database lists the workers (in
 * {@code pg_dist_node}). A test database is created on every node with the extension installed and
 * the workers registered, so the broker's migrations distribute it. Found through {@code
 * QUEEN_TEST_CITUS_URL} ({@code postgresql://user@host:port}), or when PG_HOST/PG_PORT themselves
 * name a coordinator: then every test class runs on Citus.
 */
public final class CitusCluster {
  /** The variable that names the cluster, for classes that run only on Citus. */
  public static final String URL_VARIABLE = "QUEEN_TEST_CITUS_URL";

  /** Why the Citus classes are skipped when the variable is not set. */
  public static final String NOT_CONFIGURED =
      "no Citus cluster: set QUEEN_TEST_CITUS_URL=postgresql://user@host:port of a coordinator"
          + " (docs/operations.md, Running on Citus)";

  private final DbConfig coordinator;
  private final List<DbConfig> workers;

  private CitusCluster(DbConfig coordinator, List<DbConfig> workers) {
    this.coordinator = coordinator;
    this.workers = workers;
  }

  /** The cluster {@code QUEEN_TEST_CITUS_URL} names, if it is set. */
  public static Optional<CitusCluster> configured() throws SQLException {
    String url = System.getenv(URL_VARIABLE);
    if (url == null || url.isBlank()) {
      return Optional.empty();
    }
    URI u = URI.create(url);
    String user = u.getUserInfo() == null ? "postgres" : u.getUserInfo();
    DbConfig admin =
        new DbConfig(u.getHost(), u.getPort() < 0 ? 5432 : u.getPort(), user, "", "postgres", 8);
    return of(admin);
  }

  /** The cluster whose coordinator {@code admin} reaches, or empty when it is no coordinator. */
  public static Optional<CitusCluster> of(DbConfig admin) throws SQLException {
    List<DbConfig> workers = new ArrayList<>();
    try (Connection c = connect(admin);
        Statement st = c.createStatement();
        ResultSet citus = st.executeQuery("select 1 from pg_extension where extname = 'citus'")) {
      if (!citus.next()) {
        return Optional.empty();
      }
    }
    try (Connection c = connect(admin);
        Statement st = c.createStatement();
        ResultSet rs =
            st.executeQuery(
                "select nodename, nodeport from pg_dist_node where groupid > 0 order by nodeid")) {
      while (rs.next()) {
        workers.add(
            new DbConfig(rs.getString(1), rs.getInt(2), admin.user(), admin.password(), "", 8));
      }
    }
    return workers.isEmpty() ? Optional.empty() : Optional.of(new CitusCluster(admin, workers));
  }

  /**
   * A new database on every node, with the extension and the workers registered. Eight shards per
   * distributed table: enough to spread partitions over two workers, few enough that a test
   * database is made in a second or two.
   */
  public DbConfig createDatabase(String name) throws SQLException {
    for (DbConfig node : nodes()) {
      execute(node, "create database " + name + " template template0");
      execute(node.withDatabase(name), "create extension citus");
    }
    DbConfig db = coordinator.withDatabase(name);
    execute(db, "alter database " + name + " set citus.shard_count = 8");
    execute(
        db,
        "select citus_set_coordinator_host('"
            + coordinator.host()
            + "', "
            + coordinator.port()
            + ")");
    for (DbConfig w : workers) {
      execute(db, "select citus_add_node('" + w.host() + "', " + w.port() + ")");
    }
    return db;
  }

  public void dropDatabase(String name) throws SQLException {
    for (DbConfig node : nodes()) {
      execute(node, "drop database if exists " + name + " with (force)");
    }
  }

  private List<DbConfig> nodes() {
    List<DbConfig> all = new ArrayList<>();
    all.add(coordinator);
    all.addAll(workers);
    return all;
  }

  private static void execute(DbConfig node, String sql) throws SQLException {
    try (Connection c = connect(node);
        Statement st = c.createStatement()) {
      st.execute(sql);
    }
  }

  private static Connection connect(DbConfig node) throws SQLException {
    String database = node.database().isEmpty() ? "postgres" : node.database();
    return DriverManager.getConnection(
        node.withDatabase(database).jdbcUrl(), node.user(), node.password());
  }
}
