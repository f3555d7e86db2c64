package queen.server.store;

import java.sql.Array;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;

/** The planner's statistics of the broker's tables: which are out of date, and gathering them. */
public final class PlannerStatsStore {
  /**
   * Every table of the broker (SchemaRulesTest holds it to the schema): a table left out kept its
   * dead rows for good where autovacuum is off, as the trace names deleted with their traces did.
   */
  static final List<String> TABLES =
      List.of(
          "log_segments",
          "log_txn_index",
          "dead_letters",
          "log_partitions",
          "log_consumers",
          "log_scan_watermarks",
          "stream_state",
          "stream_queries",
          "queue_stats",
          "queue_stats_minutes",
          "group_stats",
          "group_resets",
          "system_state",
          "queues",
          "consumer_groups_metadata",
          "message_traces",
          "message_trace_names",
          "payload_keys",
          "broker_stats_minutes");

  /**
   * Those of {@link #TABLES} changed by more rows since their last ANALYZE than autovacuum would
   * let pass (autovacuum_analyze_threshold plus autovacuum_analyze_scale_factor of their rows, the
   * server's settings), and none while the server's autovacuum is on: it gathers them itself.
   */
  private static final String STALE =
      """
      select s.relname
        from pg_stat_user_tables s
        join pg_class c on c.oid = s.relid
       where current_setting('autovacuum') = 'off'
         and s.schemaname = 'queen'
         and s.relname = any (?)
         and s.n_mod_since_analyze
             > current_setting('autovacuum_analyze_threshold')::float8
               + current_setting('autovacuum_analyze_scale_factor')::float8
                 * greatest(c.reltuples, 0)
       order by s.relname""";

  private final Database db;

  public PlannerStatsStore(Database db) {
    this.db = db;
  }

  /** The statement of {@code verb} ("vacuum (...)", "analyze (...)") over the given tables. */
  static String over(String verb, List<String> tables) {
    return verb + " " + String.join(", ", tables.stream().map(t -> "queen." + t).toList());
  }

  /** The broker's tables whose statistics are out of date while nothing else gathers them. */
  public List<String> stale() {
    return db.autocommit(
        c -> {
          List<String> out = new ArrayList<>();
          try (PreparedStatement ps = c.prepareStatement(STALE)) {
            Array names = c.createArrayOf("text", TABLES.toArray());
            ps.setArray(1, names);
            try (ResultSet rs = ps.executeQuery()) {
              while (rs.next()) {
                out.add(rs.getString(1));
              }
            }
          }
          return out;
        });
  }

  /**
   * ANALYZE of the given tables (names from {@link #stale()}); one another session holds is
   * skipped.
   */
  public void analyze(List<String> tables) {
    if (!TABLES.containsAll(tables)) {
      throw new IllegalArgumentException("not a broker table: " + tables);
    }
    db.autocommit(
        c -> {
          try (Statement st = c.createStatement()) {
            st.execute(over("analyze (skip_locked)", tables));
          }
          return null;
        });
  }
}
