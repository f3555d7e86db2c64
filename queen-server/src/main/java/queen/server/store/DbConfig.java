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

  public String jdbcUrl() {
    return "jdbc:postgresql://" + host + ":" + port + "/" + database;
  }

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
