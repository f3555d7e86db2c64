package queen.server.store;

/**
 * Where the broker's PostgreSQL is and how many connections it may hold.
 *
 * @param host PG_HOST
 * @param port PG_PORT
 * @param user PG_USER
 * @param password PG_PASSWORD, empty for trust or peer authentication
 * @param database PG_DB
 * @param poolSize DB_POOL_SIZE, the most connections the broker opens
 */
public record DbConfig(
    String host, int port, String user, String password, String database, int poolSize) {

  /**
   * The JDBC URL, with a login timeout: without one, a server that accepted a connection and never
   * answered held the pool's only connection-adding thread for good, and the broker stayed without
   * connections after the server came back.
   */
  public String jdbcUrl() {
    return "jdbc:postgresql://"
        + host
        + ":"
        + port
        + "/"
        + database
        + "?loginTimeout="
        + LOGIN_TIMEOUT_SECONDS;
  }

  /** How long opening a connection may take, login included. */
  public static final int LOGIN_TIMEOUT_SECONDS = 10;

  /** user@host:port/database, for logs: never the password. */
  public String describe() {
    return user + "@" + host + ":" + port + "/" + database;
  }

  public DbConfig withDatabase(String other) {
    return new DbConfig(host, port, user, password, other, poolSize);
  }

  public DbConfig withPoolSize(int size) {
    return new DbConfig(host, port, user, password, database, size);
  }
}
