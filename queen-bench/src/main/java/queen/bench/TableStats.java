package queen.bench;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * Updates and HOT updates of the broker's most updated tables, and their size, from PostgreSQL's
 * statistics: how much of the cursor and partition churn stays HOT, and how small those tables stay
 * without vacuum.
 */
final class TableStats {
  static final List<String> TABLES = List.of("log_consumers", "log_partitions", "log_txn_index");

  /** Counters of one table at one moment. */
  record Counts(long updates, long hotUpdates, long bytes) {}

  private TableStats() {}

  static Map<String, Counts> read(Jdbc db) throws Exception {
    Map<String, Counts> out = new LinkedHashMap<>();
    try (Connection c = db.connection();
        PreparedStatement ps =
            c.prepareStatement(
                "select relname, n_tup_upd, n_tup_hot_upd, pg_relation_size(relid)"
                    + " from pg_stat_user_tables where schemaname = 'queen' and relname = any (?)")) {
      ps.setArray(1, c.createArrayOf("text", TABLES.toArray()));
      try (ResultSet rs = ps.executeQuery()) {
        while (rs.next()) {
          out.put(rs.getString(1), new Counts(rs.getLong(2), rs.getLong(3), rs.getLong(4)));
        }
      }
    }
    return out;
  }

  /**
   * Reads again until two reads a second apart agree: the broker's sessions report their statistics
   * when they go idle, up to a second after the work.
   */
  static Map<String, Counts> settled(Jdbc db) throws Exception {
    Map<String, Counts> last = read(db);
    for (int i = 0; i < 15; i++) {
      TimeUnit.SECONDS.sleep(1);
      Map<String, Counts> now = read(db);
      if (now.equals(last)) {
        return now;
      }
      last = now;
    }
    return last;
  }

  /** Per table: updates, the HOT share of them, and the size after. */
  static Map<String, Object> describe(Map<String, Counts> before, Map<String, Counts> after) {
    Map<String, Object> out = new LinkedHashMap<>();
    for (String t : TABLES) {
      Counts b = before.getOrDefault(t, new Counts(0, 0, 0));
      Counts a = after.getOrDefault(t, new Counts(0, 0, 0));
      long upd = a.updates() - b.updates();
      long hot = a.hotUpdates() - b.hotUpdates();
      out.put(
          t,
          String.format(
              "%d updates, %s HOT, %d kB",
              upd,
              upd == 0 ? "n/a" : Math.round(1000.0 * hot / upd) / 10.0 + "%",
              a.bytes() / 1024));
    }
    return out;
  }
}
