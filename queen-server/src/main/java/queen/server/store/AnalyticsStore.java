package queen.server.store;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The readers behind the analytics routes: per-minute rows by queue and by broker (small tables the
 * statistics tick writes), and a snapshot of PostgreSQL's own statistics for this database.
 */
public final class AnalyticsStore {
  private static final ObjectMapper JSON = new ObjectMapper();

  private final Database db;

  public AnalyticsStore(Database db) {
    this.db = db;
  }

  /** One queue's minute; the lag fields are null in minutes without a snapshot refresh. */
  public record QueueMinute(
      String queue,
      Instant minute,
      long pushed,
      long popped,
      long acked,
      long failed,
      long deadLettered,
      long retentionDeleted,
      Long lagMessages,
      Long maxLagSeconds) {}

  /** One broker's minute: the latest sample of its gauges, its message counts added up. */
  public record BrokerMinute(Instant minute, StatsStore.BrokerSample sample) {}

  /** A table of the queen schema as PostgreSQL's statistics see it. */
  public record TableStats(
      String name,
      long totalBytes,
      long liveRows,
      long deadRows,
      long updates,
      long hotUpdates,
      Instant lastVacuum,
      Instant lastAutovacuum) {}

  /** PostgreSQL's view of this database now. */
  public record PostgresStats(
      String version,
      String database,
      long sizeBytes,
      boolean autovacuum,
      Map<String, Long> connections,
      long committed,
      long rolledBack,
      long blocksHit,
      long blocksRead,
      long deadlocks,
      long tempBytes,
      List<TableStats> tables) {}

  /** At most {@code limit} minutes of the queues' series (of {@code queue}'s, when not null). */
  public List<QueueMinute> queueMinutes(String queue, Instant from, Instant to, int limit) {
    return db.autocommit(
        c -> {
          List<QueueMinute> out = new ArrayList<>();
          try (PreparedStatement ps =
              c.prepareStatement(
                  "select * from queen.analytics_queue_minutes_v1(?, ?, ?) limit ?")) {
            ps.setString(1, queue);
            Sql.setTimestamptz(ps, 2, from);
            Sql.setTimestamptz(ps, 3, to);
            ps.setInt(4, limit);
            try (ResultSet rs = ps.executeQuery()) {
              while (rs.next()) {
                out.add(
                    new QueueMinute(
                        rs.getString("queue"),
                        Sql.instant(rs, "minute"),
                        rs.getLong("pushed"),
                        rs.getLong("popped"),
                        rs.getLong("acked"),
                        rs.getLong("failed"),
                        rs.getLong("dead_lettered"),
                        rs.getLong("retention_deleted"),
                        Sql.nullableLong(rs, "lag_messages"),
                        Sql.nullableLong(rs, "max_lag_seconds")));
              }
            }
          }
          return out;
        });
  }

  public List<BrokerMinute> brokerMinutes(
      String brokerId, String hostname, Instant from, Instant to, int limit) {
    return db.autocommit(
        c -> {
          List<BrokerMinute> out = new ArrayList<>();
          try (PreparedStatement ps =
              c.prepareStatement(
                  "select * from queen.analytics_broker_minutes_v1(?, ?, ?, ?) limit ?")) {
            ps.setString(1, brokerId);
            ps.setString(2, hostname);
            Sql.setTimestamptz(ps, 3, from);
            Sql.setTimestamptz(ps, 4, to);
            ps.setInt(5, limit);
            try (ResultSet rs = ps.executeQuery()) {
              while (rs.next()) {
                double cpu = rs.getDouble("cpu_percent");
                Double cpuPercent = rs.wasNull() ? null : cpu;
                out.add(
                    new BrokerMinute(
                        Sql.instant(rs, "minute"),
                        new StatsStore.BrokerSample(
                            rs.getString("broker_id"),
                            rs.getString("hostname"),
                            Sql.instant(rs, "started_at"),
                            Sql.nullableLong(rs, "rss_bytes"),
                            rs.getLong("heap_used_bytes"),
                            rs.getLong("heap_committed_bytes"),
                            cpuPercent,
                            rs.getInt("threads"),
                            new Database.PoolState(
                                rs.getInt("db_pool_active"),
                                rs.getInt("db_pool_idle"),
                                rs.getInt("db_pool_waiting")),
                            rs.getLong("pushed"),
                            rs.getLong("popped"),
                            rs.getLong("acked"),
                            parked(rs.getString("parked")))));
              }
            }
          }
          return out;
        });
  }

  private static final String DATABASE =
      "select version(), current_database(), pg_database_size(current_database()),"
          + " current_setting('autovacuum') = 'on', d.xact_commit, d.xact_rollback, d.blks_hit,"
          + " d.blks_read, d.deadlocks, d.temp_bytes"
          + " from pg_stat_database d where d.datname = current_database()";

  private static final String CONNECTIONS =
      "select coalesce(state, 'background'), count(*) from pg_stat_activity"
          + " where datname = current_database() group by 1 order by 1";

  private static final String TABLES =
      "select relname, pg_total_relation_size(relid), n_live_tup, n_dead_tup, n_tup_upd,"
          + " n_tup_hot_upd, last_vacuum, last_autovacuum from pg_stat_user_tables"
          + " where schemaname = 'queen' order by pg_total_relation_size(relid) desc, relname";

  public PostgresStats postgres() {
    return db.autocommit(
        c -> {
          Map<String, Long> connections = new LinkedHashMap<>();
          try (PreparedStatement ps = c.prepareStatement(CONNECTIONS);
              ResultSet rs = ps.executeQuery()) {
            while (rs.next()) {
              connections.put(rs.getString(1), rs.getLong(2));
            }
          }
          List<TableStats> tables = new ArrayList<>();
          try (PreparedStatement ps = c.prepareStatement(TABLES);
              ResultSet rs = ps.executeQuery()) {
            while (rs.next()) {
              tables.add(
                  new TableStats(
                      rs.getString(1),
                      rs.getLong(2),
                      rs.getLong(3),
                      rs.getLong(4),
                      rs.getLong(5),
                      rs.getLong(6),
                      Sql.instant(rs, "last_vacuum"),
                      Sql.instant(rs, "last_autovacuum")));
            }
          }
          try (PreparedStatement ps = c.prepareStatement(DATABASE);
              ResultSet rs = ps.executeQuery()) {
            rs.next();
            return new PostgresStats(
                rs.getString(1),
                rs.getString(2),
                rs.getLong(3),
                rs.getBoolean(4),
                connections,
                rs.getLong(5),
                rs.getLong(6),
                rs.getLong(7),
                rs.getLong(8),
                rs.getLong(9),
                rs.getLong(10),
                tables);
          }
        });
  }

  /** The parked counts of a broker row, {queue: long-polls}. */
  private static Map<String, Integer> parked(String json) {
    Map<String, Integer> parked = new LinkedHashMap<>();
    try {
      JSON.readTree(json)
          .fields()
          .forEachRemaining(e -> parked.put(e.getKey(), e.getValue().asInt()));
    } catch (JsonProcessingException e) {
      throw new IllegalStateException("parked counts are not JSON: " + json, e);
    }
    return parked;
  }
}
