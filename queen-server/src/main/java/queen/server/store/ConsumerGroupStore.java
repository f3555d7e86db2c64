package queen.server.store;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.UUID;

/**
 * Consumer-group administration: deleting and seeking cursors, the subscription start, the lag
 * views, and the feed of resets that every broker follows to drop its cached view of a group.
 */
public final class ConsumerGroupStore {
  private final Database db;

  public ConsumerGroupStore(Database db) {
    this.db = db;
  }

  /** What a delete removed; {@code queueFound} false only for a named queue that does not exist. */
  public record Deleted(boolean queueFound, int partitions, int metadata) {}

  /** What a seek moved; {@code queueFound} false for an unknown queue. */
  public record Sought(boolean queueFound, int partitions) {}

  /**
   * One partition seeking to its end: {@code cursor} is the new committed offset, null when the
   * queue ({@code queueFound} false) or the partition does not exist.
   */
  public record PartitionSought(boolean queueFound, Long cursor) {}

  /**
   * One cursor of a group and how far it trails its partition: {@code oldestUnconsumedAt} is the
   * created_at of its oldest unconsumed message, null when it has none.
   */
  public record Cursor(
      String queue,
      String partition,
      UUID partitionId,
      UUID workerId,
      Instant lastConsumedAt,
      long totalConsumed,
      long committed,
      long offsetLag,
      Instant oldestUnconsumedAt,
      boolean leaseActive) {

    Cursor withOldestUnconsumedAt(Instant at) {
      return new Cursor(
          queue,
          partition,
          partitionId,
          workerId,
          lastConsumedAt,
          totalConsumed,
          committed,
          offsetLag,
          at,
          leaseActive);
    }
  }

  /**
   * What the caller already knows of a lagging cursor: the created_at of its oldest unconsumed
   * message, or null, and the store probes the segments for it.
   */
  @FunctionalInterface
  public interface KnownOldest {
    Instant oldestUnconsumedAt(String group, UUID partitionId);
  }

  /** A cursor whose oldest uncommitted message is older than asked. */
  public record Lagging(
      String group,
      String queue,
      String partition,
      UUID partitionId,
      UUID workerId,
      long offsetLag,
      long timeLagSeconds,
      Instant oldestUnconsumedAt,
      Instant lastConsumedAt) {}

  /** A reset announced by some broker: queue null means every queue. */
  public record Reset(long id, String queue, String group) {}

  /** Deletes the group's cursors on {@code queue}, or on every queue when it is null. */
  public Deleted delete(String group, String queue, boolean deleteMetadata) {
    return db.autocommit(
        c -> {
          try (PreparedStatement ps =
              c.prepareStatement("select * from queen.group_delete_v1(?, ?, ?)")) {
            ps.setString(1, group);
            ps.setString(2, queue);
            ps.setBoolean(3, deleteMetadata);
            try (ResultSet rs = ps.executeQuery()) {
              rs.next();
              return new Deleted(
                  rs.getBoolean("queue_found"),
                  rs.getInt("deleted_partitions"),
                  rs.getInt("metadata_deleted"));
            }
          }
        });
  }

  /** Seeks every cursor of the group on the queue to the end ({@code at} null) or to {@code at}. */
  public Sought seek(String group, String queue, Instant at) {
    return db.autocommit(
        c -> {
          try (PreparedStatement ps =
              c.prepareStatement("select * from queen.group_seek_v1(?, ?, ?, ?)")) {
            ps.setString(1, group);
            ps.setString(2, queue);
            ps.setBoolean(3, at == null);
            Sql.setTimestamptz(ps, 4, at);
            try (ResultSet rs = ps.executeQuery()) {
              rs.next();
              return new Sought(rs.getBoolean("queue_found"), rs.getInt("partitions_updated"));
            }
          }
        });
  }

  /** Seeks the group's cursor on one partition to its newest message. */
  public PartitionSought seekPartitionToEnd(String group, String queue, String partition) {
    return db.autocommit(
        c -> {
          try (PreparedStatement ps =
              c.prepareStatement("select * from queen.group_seek_partition_v1(?, ?, ?)")) {
            ps.setString(1, group);
            ps.setString(2, queue);
            ps.setString(3, partition);
            try (ResultSet rs = ps.executeQuery()) {
              rs.next();
              long cursor = rs.getLong("cursor_offset");
              Long found = rs.wasNull() ? null : cursor;
              return new PartitionSought(rs.getBoolean("queue_found"), found);
            }
          }
        });
  }

  /** Sets the group's subscription start on every queue it subscribed to; rows updated. */
  public int updateSubscription(String group, Instant from) {
    // a write: never cut by the admin pool's statement timeout
    return db.unbounded(
        c -> {
          try (PreparedStatement ps =
              c.prepareStatement("select queen.group_subscription_v1(?, ?)")) {
            ps.setString(1, group);
            Sql.setTimestamptz(ps, 2, from);
            try (ResultSet rs = ps.executeQuery()) {
              rs.next();
              return rs.getInt(1);
            }
          }
        });
  }

  /**
   * A page of the group's cursors on {@code queue} (every queue when null; from the partition named
   * {@code partitionFrom} on when not null), ordered by queue and partition, and how many there
   * are; empty for an unknown group. The oldest unconsumed message of a lagging cursor comes from
   * {@code known} when it knows it, else from a probe into the cursor's segments.
   */
  public Page<Cursor> detail(
      String group, String queue, String partitionFrom, int limit, int offset, KnownOldest known) {
    return db.autocommit(
        c -> {
          Page<Cursor> page =
              Page.read((l, o) -> detail(c, group, queue, partitionFrom, l, o), limit, offset);
          return new Page<>(withOldest(c, group, page.items(), known), page.total());
        });
  }

  private static Page<Cursor> detail(
      Connection c, String group, String queue, String partitionFrom, int limit, int offset)
      throws SQLException {
    List<Cursor> out = new ArrayList<>();
    long total = 0;
    try (PreparedStatement ps =
        c.prepareStatement("select * from queen.group_detail_v4(?, ?, ?, ?, ?)")) {
      ps.setString(1, group);
      ps.setString(2, queue);
      ps.setString(3, partitionFrom);
      ps.setInt(4, limit);
      ps.setInt(5, offset);
      try (ResultSet rs = ps.executeQuery()) {
        while (rs.next()) {
          total = rs.getLong("cursor_count");
          out.add(cursor(rs, rs.getString("queue_name")));
        }
      }
    }
    return new Page<>(out, total);
  }

  /** A cursor row of the queue, its oldest unconsumed message not read yet. */
  private static Cursor cursor(ResultSet rs, String queue) throws SQLException {
    return new Cursor(
        queue,
        rs.getString("partition_name"),
        rs.getObject("partition_id", UUID.class),
        rs.getObject("worker_id", UUID.class),
        Sql.instant(rs, "last_consumed_at"),
        rs.getLong("total_consumed"),
        rs.getLong("committed"),
        rs.getLong("offset_lag"),
        null,
        rs.getBoolean("lease_active"));
  }

  /**
   * Every group's cursors on a page of the queue's partitions ({@code limit} of them by name, from
   * {@code partitionFrom} on when not null), by group in name order; the oldest unconsumed message
   * of a lagging cursor as {@link #detail} finds it.
   */
  public Map<String, List<Cursor>> queueCursors(
      String queue, String partitionFrom, int limit, KnownOldest known) {
    return db.autocommit(
        c -> {
          Map<String, List<Cursor>> byGroup = new TreeMap<>();
          try (PreparedStatement ps =
              c.prepareStatement("select * from queen.queue_cursors_v1(?, ?, ?)")) {
            ps.setString(1, queue);
            ps.setString(2, partitionFrom);
            ps.setInt(3, limit);
            try (ResultSet rs = ps.executeQuery()) {
              while (rs.next()) {
                byGroup
                    .computeIfAbsent(rs.getString("consumer_group"), g -> new ArrayList<>())
                    .add(cursor(rs, queue));
              }
            }
          }
          for (Map.Entry<String, List<Cursor>> e : byGroup.entrySet()) {
            e.setValue(withOldest(c, e.getKey(), e.getValue(), known));
          }
          return byGroup;
        });
  }

  /** The cursors with the oldest unconsumed message of each lagging one: known, or probed. */
  private static List<Cursor> withOldest(
      Connection c, String group, List<Cursor> cursors, KnownOldest known) throws SQLException {
    List<Cursor> out = new ArrayList<>(cursors.size());
    Map<UUID, Integer> unknown = new HashMap<>();
    for (Cursor cursor : cursors) {
      Instant at = null;
      if (cursor.offsetLag() > 0) {
        at = known.oldestUnconsumedAt(group, cursor.partitionId());
        if (at == null) {
          unknown.put(cursor.partitionId(), out.size());
        }
      }
      out.add(cursor.withOldestUnconsumedAt(at));
    }
    if (unknown.isEmpty()) {
      return out;
    }
    try (PreparedStatement ps =
        c.prepareStatement("select * from queen.group_oldest_unconsumed_v1(?, ?)")) {
      ps.setString(1, group);
      ps.setArray(2, c.createArrayOf("uuid", unknown.keySet().toArray()));
      try (ResultSet rs = ps.executeQuery()) {
        while (rs.next()) {
          int i = unknown.get(rs.getObject("partition_id", UUID.class));
          out.set(i, out.get(i).withOldestUnconsumedAt(Sql.instant(rs, "oldest_unconsumed_at")));
        }
      }
    }
    return out;
  }

  /**
   * Cursors whose oldest uncommitted message is at least {@code minSeconds} old, the {@code limit}
   * oldest first.
   */
  public List<Lagging> lagging(int minSeconds, int limit) {
    return db.autocommit(
        c -> {
          List<Lagging> out = new ArrayList<>();
          try (PreparedStatement ps =
              c.prepareStatement("select * from queen.groups_lagging_v2(?, ?)")) {
            ps.setInt(1, minSeconds);
            ps.setInt(2, limit);
            try (ResultSet rs = ps.executeQuery()) {
              while (rs.next()) {
                out.add(
                    new Lagging(
                        rs.getString("consumer_group"),
                        rs.getString("queue_name"),
                        rs.getString("partition_name"),
                        rs.getObject("partition_id", UUID.class),
                        rs.getObject("worker_id", UUID.class),
                        rs.getLong("offset_lag"),
                        rs.getLong("time_lag_seconds"),
                        Sql.instant(rs, "oldest_unconsumed_at"),
                        Sql.instant(rs, "last_consumed_at")));
              }
            }
          }
          return out;
        });
  }

  /** The id of the newest reset announced so far (0 when none). */
  public long resetsHead() {
    return db.autocommit(c -> single(c, "select queen.group_resets_head_v1()"));
  }

  private static long single(Connection c, String query) throws SQLException {
    try (PreparedStatement ps = c.prepareStatement(query);
        ResultSet rs = ps.executeQuery()) {
      rs.next();
      return rs.getLong(1);
    }
  }
}
