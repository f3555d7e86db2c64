package queen.server.store;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;

/** Direct calls of the pop functions over JDBC, with the clock as a parameter. */
final class PopSql {
  private PopSql() {}

  /** One row of queen.log_pop_v1. */
  record Row(
      String verdict, Instant retryAt, long baseOffset, int startIdx, int take, int attempt) {}

  static List<Row> pop(
      Connection c,
      UUID partition,
      String group,
      UUID worker,
      int budget,
      boolean autoAck,
      String mode,
      Instant from,
      boolean skipWindow,
      Instant now)
      throws SQLException {
    try (PreparedStatement ps =
        c.prepareStatement("select * from queen.log_pop_v1(?, ?, ?, ?, ?, null, ?, ?, ?, ?)")) {
      ps.setObject(1, partition);
      ps.setString(2, group);
      ps.setObject(3, worker);
      ps.setInt(4, budget);
      ps.setBoolean(5, autoAck);
      ps.setString(6, mode);
      Sql.setTimestamptz(ps, 7, from);
      ps.setBoolean(8, skipWindow);
      Sql.setTimestamptz(ps, 9, now);
      List<Row> rows = new ArrayList<>();
      try (ResultSet rs = ps.executeQuery()) {
        while (rs.next()) {
          rows.add(
              new Row(
                  rs.getString("verdict"),
                  Sql.instant(rs, "retry_at"),
                  rs.getLong("base_offset"),
                  rs.getInt("start_idx"),
                  rs.getInt("take"),
                  rs.getInt("attempt")));
        }
      }
      return rows;
    }
  }

  /** A leased pop of the queue-mode group with nothing but the clock set. */
  static List<Row> pop(Connection c, UUID partition, int budget, Instant now) throws SQLException {
    return pop(
        c, partition, "__QUEUE_MODE__", UUID.randomUUID(), budget, false, "all", null, false, now);
  }

  static int taken(List<Row> rows) {
    return rows.stream().filter(r -> r.verdict().equals("delivered")).mapToInt(Row::take).sum();
  }

  static String verdict(List<Row> rows) {
    return rows.getFirst().verdict();
  }

  static long scalar(Connection c, String sql) throws SQLException {
    try (Statement st = c.createStatement();
        ResultSet rs = st.executeQuery(sql)) {
      return rs.next() ? rs.getLong(1) : 0;
    }
  }

  static Instant instant(Connection c, String sql) throws SQLException {
    try (Statement st = c.createStatement();
        ResultSet rs = st.executeQuery(sql)) {
      rs.next();
      return rs.getObject(1, OffsetDateTime.class).toInstant();
    }
  }

  static void exec(Connection c, String sql) throws SQLException {
    try (Statement st = c.createStatement()) {
      st.execute(sql);
    }
  }

  static UUID partitionId(Connection c, String queue, String partition) throws SQLException {
    try (Statement st = c.createStatement();
        ResultSet rs =
            st.executeQuery(
                "select p.id from queen.log_partitions p join queen.queues q on q.id = p.queue_id"
                    + " where q.name = '"
                    + queue
                    + "' and p.name = '"
                    + partition
                    + "'")) {
      rs.next();
      return rs.getObject(1, UUID.class);
    }
  }
}
