package queen.bench;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;

/** A connection pool for the baselines, sized like the broker's. */
final class Jdbc implements AutoCloseable {
  private final HikariDataSource pool;

  Jdbc(String url, String user, String password, int size) {
    HikariConfig c = new HikariConfig();
    c.setJdbcUrl(url);
    c.setUsername(user);
    c.setPassword(password);
    c.setMaximumPoolSize(size);
    c.setPoolName("bench");
    this.pool = new HikariDataSource(c);
  }

  Connection connection() throws SQLException {
    return pool.getConnection();
  }

  void exec(String... statements) throws SQLException {
    try (Connection c = connection();
        Statement st = c.createStatement()) {
      for (String s : statements) {
        st.execute(s);
      }
    }
  }

  @Override
  public void close() {
    pool.close();
  }
}
