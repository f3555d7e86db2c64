package queen.server.store;

import java.sql.Array;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;

/**
 * What the server's autovacuum would do for the broker's tables while it is off: which tables have
 * more dead rows, or more changed rows since their statistics, than it lets pass, and the VACUUM
 * and ANALYZE that it would run.
 */
public final class AutovacuumStore {
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
   * Left to retention's cycle, which deletes their rows and vacuums after: a VACUUM of the segments
   * can take long, and unlike autovacuum's it does not give way to a migration's ALTER TABLE,
   * behind which every push and pop would then wait.
   */
  private static final List<String> CYCLE_VACUUMS = List.of("log_segments");

  /**
   * Those of {@link #TABLES} past autovacuum's thresholds (the server's settings, over their rows):
   * more dead rows than autovacuum_vacuum_threshold plus autovacuum_vacuum_scale_factor of them, or
   * more rows changed since their last ANALYZE than the analyze pair; none while the server's
   * autovacuum is on, which does it itself.
   */
  private static final String DUE =
      """
      select s.relname,
             s.n_dead_tup
               > current_setting('autovacuum_vacuum_threshold')::float8
                 + current_setting('autovacuum_vacuum_scale_factor')::float8
                   * greatest(c.reltuples, 0) as vacuum,
             s.n_mod_since_analyze
               > current_setting('autovacuum_analyze_threshold')::float8
                 + current_setting('autovacuum_analyze_scale_factor')::float8
                   * greatest(c.reltuples, 0) as analyze
        from pg_stat_user_tables s
        join pg_class c on c.oid = s.relid
       where current_setting('autovacuum') = 'off'
         and s.schemaname = 'queen'
         and s.relname = any (?)
       order by s.relname""";

  private final Database db;

  public AutovacuumStore(Database db) {
    this.db = db;
  }

  /** The statement of {@code verb} ("vacuum (...)", "analyze (...)") over the given tables. */
  static String over(String verb, List<String> tables) {
    return verb + " " + String.join(", ", tables.stream().map(t -> "queen." + t).toList());
  }

  /** Which tables are due for what (a table may be due for both). */
  public record Due(List<String> vacuum, List<String> analyze) {}

  /** The broker's tables past autovacuum's thresholds, while nothing else vacuums them. */
  public Due due() {
    return db.autocommit(
        c -> {
          List<String> vacuum = new ArrayList<>();
          List<String> analyze = new ArrayList<>();
          try (PreparedStatement ps = c.prepareStatement(DUE)) {
            Array names = c.createArrayOf("text", TABLES.toArray());
            ps.setArray(1, names);
            try (ResultSet rs = ps.executeQuery()) {
              while (rs.next()) {
                if (rs.getBoolean("vacuum") && !CYCLE_VACUUMS.contains(rs.getString(1))) {
                  vacuum.add(rs.getString(1));
                }
                if (rs.getBoolean("analyze")) {
                  analyze.add(rs.getString(1));
                }
              }
            }
          }
          return new Due(vacuum, analyze);
        });
  }

  /**
   * ANALYZE of the given tables (names from {@link #due()}); one another session holds is skipped.
   */
  public void analyze(List<String> tables) {
    run("analyze (skip_locked)", tables);
  }

  /**
   * VACUUM, with ANALYZE, of the given tables (names from {@link #due()}); one another session
   * holds (another broker's VACUUM, a retention cycle's) is skipped.
   */
  public void vacuum(List<String> tables) {
    run("vacuum (skip_locked, analyze)", tables);
  }

  private void run(String verb, List<String> tables) {
    if (!TABLES.containsAll(tables)) {
      throw new IllegalArgumentException("not a broker table: " + tables);
    }
    db.autocommit(
        c -> {
          try (Statement st = c.createStatement()) {
            st.execute(over(verb, tables));
          }
          return null;
        });
  }
}
