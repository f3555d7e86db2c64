package queen.server.store;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.sql.Array;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;

/** The statistics tables: per-minute counters, the per-queue snapshot, and their readers. */
public final class StatsStore {
  private final Database db;

  public StatsStore(Database db) {
    this.db = db;
  }

  /** One broker's counts for one queue since its last flush. */
  public record Counts(
      String queue,
      long pushed,
      long popped,
      long acked,
      long failed,
      long deadLettered,
      long retentionDeleted) {}

  /**
   * What one broker reports of itself with each tick: process and pool figures (latest sample wins
   * within a minute), its message counts since the last tick (added up), and the long-polls parked
   * on it by queue. {@code rssBytes} and {@code cpuPercent} are null where the platform does not
   * tell.
   */
  public record BrokerSample(
      String brokerId,
      String hostname,
      Instant startedAt,
      Long rssBytes,
      long heapUsedBytes,
      long heapCommittedBytes,
      Double cpuPercent,
      int threads,
      Database.PoolState pool,
      long pushed,
      long popped,
      long acked,
      Map<String, Integer> parked) {
    String json() {
      ObjectNode o = JSON.createObjectNode();
      o.put("brokerId", brokerId)
          .put("hostname", hostname)
          .put("startedAt", startedAt.toString())
          .put("rssBytes", rssBytes)
          .put("heapUsedBytes", heapUsedBytes)
          .put("heapCommittedBytes", heapCommittedBytes)
          .put("cpuPercent", cpuPercent)
          .put("threads", threads)
          .put("dbPoolActive", pool.active())
          .put("dbPoolIdle", pool.idle())
          .put("dbPoolWaiting", pool.waiting())
          .put("pushed", pushed)
          .put("popped", popped)
          .put("acked", acked);
      ObjectNode p = o.putObject("parked");
      parked.forEach(p::put);
      return o.toString();
    }
  }

  private static final ObjectMapper JSON = new ObjectMapper();

  /** One bucket of a time series. */
  public record Point(
      Instant at,
      long pushed,
      long popped,
      long acked,
      long failed,
      long deadLettered,
      Long lagMessages,
      Long maxLagSeconds) {}

  /** A queue's snapshot; {@code updatedAt} null when none was taken yet. */
  public record QueueStats(
      UUID id,
      String name,
      String namespace,
      String task,
      int priority,
      Instant createdAt,
      long partitions,
      long total,
      long pending,
      long processing,
      long completed,
      long deadLetter,
      long activeLeases,
      long lagMessages,
      long maxLagSeconds,
      Instant oldestPendingAt,
      Instant updatedAt) {}

  /**
   * Adds counts to the current minute of their queues and, when this broker claims the interval,
   * refreshes the snapshot: one call. Answers the queues refreshed, -1 when not claimed, or -2 when
   * the refresh failed (the counts are stored all the same; PostgreSQL's log has the error).
   */
  public int tick(List<Counts> counts, BrokerSample sample, long intervalMillis) {
    return db.autocommit(
        c -> {
          try (PreparedStatement ps =
              c.prepareStatement("select queen.stats_tick_v2(?, ?, ?, ?, ?, ?, ?, ?::jsonb, ?)")) {
            ps.setArray(1, c.createArrayOf("text", counts.stream().map(Counts::queue).toArray()));
            ps.setArray(2, longs(c, counts.stream().map(Counts::pushed).toArray()));
            ps.setArray(3, longs(c, counts.stream().map(Counts::popped).toArray()));
            ps.setArray(4, longs(c, counts.stream().map(Counts::acked).toArray()));
            ps.setArray(5, longs(c, counts.stream().map(Counts::failed).toArray()));
            ps.setArray(6, longs(c, counts.stream().map(Counts::deadLettered).toArray()));
            ps.setArray(7, longs(c, counts.stream().map(Counts::retentionDeleted).toArray()));
            ps.setString(8, sample == null ? null : sample.json());
            ps.setInt(9, (int) Math.min(intervalMillis, Integer.MAX_VALUE));
            try (ResultSet rs = ps.executeQuery()) {
              rs.next();
              return rs.getInt(1);
            }
          }
        });
  }

  private static Array longs(Connection c, Object[] values) throws SQLException {
    return c.createArrayOf("bigint", values);
  }

  /** Recomputes every queue's snapshot and its lag in the current minute; queues refreshed. */
  public int refresh() {
    return db.autocommit(
        c -> {
          try (PreparedStatement ps = c.prepareStatement("select queen.stats_refresh_v1()");
              ResultSet rs = ps.executeQuery()) {
            rs.next();
            return rs.getInt(1);
          }
        });
  }

  /** Every queue with its snapshot, newest queue first. */
  public List<QueueStats> queues() {
    return db.autocommit(
        c -> {
          List<QueueStats> out = new ArrayList<>();
          try (PreparedStatement ps = c.prepareStatement("select * from queen.stats_queues_v1()");
              ResultSet rs = ps.executeQuery()) {
            while (rs.next()) {
              out.add(
                  new QueueStats(
                      rs.getObject("queue_id", UUID.class),
                      rs.getString("name"),
                      rs.getString("namespace"),
                      rs.getString("task"),
                      rs.getInt("priority"),
                      Sql.instant(rs, "created_at"),
                      rs.getLong("partitions"),
                      rs.getLong("total"),
                      rs.getLong("pending"),
                      rs.getLong("processing"),
                      rs.getLong("completed"),
                      rs.getLong("dead_letter"),
                      rs.getLong("active_leases"),
                      rs.getLong("lag_messages"),
                      rs.getLong("max_lag_seconds"),
                      Sql.instant(rs, "oldest_pending_at"),
                      Sql.instant(rs, "updated_at")));
            }
          }
          return out;
        });
  }

  /** The per-minute rows of the matching queues, summed into buckets of {@code bucketMinutes}. */
  public List<Point> series(
      String queue, String namespace, String task, Instant from, Instant to, int bucketMinutes) {
    return db.autocommit(
        c -> {
          List<Point> out = new ArrayList<>();
          try (PreparedStatement ps =
              c.prepareStatement("select * from queen.stats_series_v1(?, ?, ?, ?, ?, ?)")) {
            ps.setString(1, queue);
            ps.setString(2, namespace);
            ps.setString(3, task);
            Sql.setTimestamptz(ps, 4, from);
            Sql.setTimestamptz(ps, 5, to);
            ps.setInt(6, bucketMinutes);
            try (ResultSet rs = ps.executeQuery()) {
              while (rs.next()) {
                out.add(
                    new Point(
                        Sql.instant(rs, "bucket"),
                        rs.getLong("pushed"),
                        rs.getLong("popped"),
                        rs.getLong("acked"),
                        rs.getLong("failed"),
                        rs.getLong("dead_lettered"),
                        Sql.nullableLong(rs, "lag_messages"),
                        Sql.nullableLong(rs, "max_lag_seconds")));
              }
            }
          }
          return out;
        });
  }
}
