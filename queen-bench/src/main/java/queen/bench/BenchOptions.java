package queen.bench;

import java.nio.file.Path;
import java.sql.SQLException;
import java.util.Map;
import picocli.CommandLine.Option;

/** Options every scenario takes. */
final class BenchOptions extends BrokerUrl {
  @Option(
      names = "--seconds",
      defaultValue = "10",
      description = "Measured seconds per run (default ${DEFAULT-VALUE}).")
  int seconds;

  @Option(
      names = "--warmup",
      defaultValue = "2",
      description = "Unmeasured seconds before each run (default ${DEFAULT-VALUE}).")
  int warmup;

  @Option(
      names = "--baseline",
      description =
          "Measure a baseline instead of the broker, straight over JDBC: naive (one row per"
              + " message, SKIP LOCKED) or ceiling (the broker's minimum SQL work).")
  String baseline;

  @Option(
      names = "--out",
      defaultValue = "bench-results",
      description =
          "Folder for results.json, results.md, batch-chart.svg (default ${DEFAULT-VALUE}).")
  Path out;

  @Option(
      names = "--pg-url",
      description =
          "JDBC URL of the database for baselines and database statistics (default from PG_HOST,"
              + " PG_PORT, PG_DB, as the broker reads them).")
  String pgUrl;

  @Option(names = "--pg-user", description = "Database user (default PG_USER or postgres).")
  String pgUser;

  @Option(names = "--pg-password", description = "Database password (default PG_PASSWORD).")
  String pgPassword;

  @Option(
      names = "--encrypted",
      description =
          "Configure the measured queue with encryptionEnabled (the broker needs"
              + " QUEEN_ENCRYPTION_KEY): payloads sealed at rest, opened on delivery.")
  boolean encrypted;

  @Option(
      names = "--pool",
      defaultValue = "20",
      description =
          "Connections of the baselines' pool, like the broker's DB_POOL_SIZE (default ${DEFAULT-VALUE}).")
  int pool;

  String jdbcUrl() {
    if (pgUrl != null) {
      return pgUrl;
    }
    Map<String, String> env = System.getenv();
    return "jdbc:postgresql://"
        + env.getOrDefault("PG_HOST", "localhost")
        + ":"
        + env.getOrDefault("PG_PORT", "5432")
        + "/"
        + env.getOrDefault("PG_DB", "postgres");
  }

  String database() {
    String u = jdbcUrl();
    String tail = u.substring(u.lastIndexOf('/') + 1);
    int q = tail.indexOf('?');
    return q < 0 ? tail : tail.substring(0, q);
  }

  Jdbc jdbc() {
    return jdbc(jdbcUrl());
  }

  private Jdbc jdbc(String url) {
    return new Jdbc(
        url,
        pgUser != null ? pgUser : System.getenv().getOrDefault("PG_USER", "postgres"),
        pgPassword != null ? pgPassword : System.getenv().getOrDefault("PG_PASSWORD", ""),
        pool);
  }

  /**
   * Drops and creates a database for a run with a broker of its own, and points the options'
   * database at it.
   */
  void recreate(String name) throws Exception {
    String admin = adminUrl();
    try (Jdbc db = jdbc(admin)) {
      db.exec(
          "drop database if exists " + name + " with (force)",
          "create database " + name + " template template0");
    }
    pgUrl = admin.replace("/postgres", "/" + name);
  }

  /** Creates a database unless it exists; an existing one is left as it is. */
  void createIfMissing(String name) throws SQLException {
    try (Jdbc db = jdbc(adminUrl())) {
      db.exec("create database " + name + " template template0");
    } catch (SQLException e) {
      if (!"42P04".equals(e.getSQLState())) { // duplicate_database
        throw e;
      }
    }
  }

  /** The same server's {@code postgres} database, to create others from. */
  private String adminUrl() {
    return jdbcUrl().replace("/" + database(), "/postgres");
  }

  /** The target named by --baseline, or the broker at --url. */
  Target target(Jdbc db) {
    if (baseline == null) {
      return new BrokerTarget(url, encrypted);
    }
    return switch (baseline) {
      case "naive" -> new NaiveTarget(db);
      case "ceiling" -> new CeilingTarget(db);
      default ->
          throw new IllegalArgumentException("--baseline is naive or ceiling, not " + baseline);
    };
  }
}
