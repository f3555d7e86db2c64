package queen.server.store;

import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.Properties;
import org.postgresql.PGConnection;
import org.postgresql.PGNotification;

/**
 * PostgreSQL LISTEN/NOTIFY for the hints between brokers: sending goes through the pool, after the
 * work it announces has committed; listening holds one dedicated connection outside the pool.
 */
public final class Notifications {
  /** The largest NOTIFY payload PostgreSQL accepts is 8000 bytes; stay clear of it. */
  public static final int MAX_PAYLOAD = 7_900;

  /** The application name of every broker's listening connection. */
  public static final String LISTENER_NAME = "queen-hints";

  private final Database db;
  private final DbConfig config;

  public Notifications(Database db, DbConfig config) {
    this.db = db;
    this.config = config;
  }

  /** Sends each payload on the channel, one autocommit call for all. */
  public void send(String channel, List<String> payloads) {
    db.uncounted(
        c -> {
          try (PreparedStatement ps = c.prepareStatement("select pg_notify(?, ?)")) {
            for (String p : payloads) {
              ps.setString(1, channel);
              ps.setString(2, p);
              ps.execute();
            }
          }
          return null;
        });
  }

  /**
   * How many sessions of this database carry the application name (listeners are named so), but the
   * backend {@code exceptPid} (0: none).
   */
  public long sessions(String applicationName, int exceptPid) {
    return db.uncounted(
        c -> {
          try (PreparedStatement ps =
              c.prepareStatement(
                  "select count(*) from pg_stat_activity"
                      + " where datname = current_database() and application_name = ?"
                      + " and pid <> ?")) {
            ps.setString(1, applicationName);
            ps.setInt(2, exceptPid);
            try (var rs = ps.executeQuery()) {
              rs.next();
              return rs.getLong(1);
            }
          }
        });
  }

  /** A connection listening on one channel. */
  public final class Listener implements AutoCloseable {
    private final Connection connection;
    private final PGConnection pg;

    private Listener(Connection connection) throws SQLException {
      this.connection = connection;
      this.pg = connection.unwrap(PGConnection.class);
    }

    /** The backend process of this connection in PostgreSQL. */
    public int pid() {
      return pg.getBackendPID();
    }

    /** The payloads received, waiting up to {@code timeoutMs} for the first one. */
    public List<String> poll(int timeoutMs) {
      try {
        PGNotification[] got = pg.getNotifications(timeoutMs);
        List<String> out = new ArrayList<>();
        if (got != null) {
          for (PGNotification n : got) {
            out.add(n.getParameter());
          }
        }
        return out;
      } catch (SQLException e) {
        throw StoreException.from(e);
      }
    }

    @Override
    public void close() {
      try {
        connection.close();
      } catch (SQLException e) {
        // a listener already cut off: nothing to close
      }
    }
  }

  /** Opens a dedicated connection and listens on the channel. */
  public Listener listen(String channel) {
    Properties props = new Properties();
    props.setProperty("user", config.user());
    props.setProperty("password", config.password());
    props.setProperty("ApplicationName", LISTENER_NAME);
    props.setProperty("tcpKeepAlive", "true");
    props.setProperty("socketFactory", KeepAliveSockets.class.getName());
    props.setProperty("connectTimeout", "5");
    try {
      Connection c = DriverManager.getConnection(config.jdbcUrl(), props);
      try (Statement st = c.createStatement()) {
        st.execute("listen " + channel);
      }
      return new Listener(c);
    } catch (SQLException e) {
      throw StoreException.from(e);
    }
  }
}
