package queen.server.store;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.UUID;

/** The operator's views of queues and consumer groups. */
public final class ResourceStore {
  private final Database db;

  public ResourceStore(Database db) {
    this.db = db;
  }

  /** A queue with its partition count and queue-mode message counts. */
  public record QueueSummary(
      UUID id,
      String name,
      String namespace,
      String task,
      Instant createdAt,
      long partitions,
      long total,
      long pending,
      long processing) {}

  /** A consumer group's cursors on one queue and how far they trail the partition heads. */
  public record GroupSummary(
      String group,
      String queue,
      long members,
      long partitionsWithLag,
      long totalLag,
      long maxTimeLagSeconds,
      Instant lastConsumedAt,
      String subscriptionMode,
      Instant subscriptionTimestamp,
      Instant subscriptionCreatedAt) {}

  /** A queue's row: its names and options, as the status detail shows them. */
  public record QueueRow(
      UUID id,
      String name,
      String namespace,
      String task,
      int priority,
      Instant createdAt,
      int leaseTime,
      int retryLimit,
      int retryDelay,
      int ttl,
      int maxSize,
      boolean deadLetterQueue,
      int retentionSeconds,
      int completedRetentionSeconds,
      boolean retentionEnabled) {}

  /** One partition of a queue with its counts. */
  public record PartitionStats(
      UUID id,
      String name,
      Instant createdAt,
      long total,
      long pending,
      long processing,
      long completed,
      long deadLetter,
      long totalConsumed,
      Instant lastActivity,
      Instant oldestMessage,
      Instant newestMessage,
      long lastOffset) {}

  /** A partition in the partition list. */
  public record PartitionSummary(
      UUID id,
      String name,
      String queue,
      Instant createdAt,
      long lastOffset,
      long retained,
      Instant lastActivity) {}

  /** The queue's row, if it exists. */
  public Optional<QueueRow> queue(String name) {
    return db.autocommit(
        c -> {
          try (PreparedStatement ps =
              c.prepareStatement("select * from queen.queues where name = ?")) {
            ps.setString(1, name);
            try (ResultSet rs = ps.executeQuery()) {
              if (!rs.next()) {
                return Optional.empty();
              }
              return Optional.of(
                  new QueueRow(
                      rs.getObject("id", UUID.class),
                      rs.getString("name"),
                      rs.getString("namespace"),
                      rs.getString("task"),
                      rs.getInt("priority"),
                      Sql.instant(rs, "created_at"),
                      rs.getInt("lease_time"),
                      rs.getInt("retry_limit"),
                      rs.getInt("retry_delay"),
                      rs.getInt("ttl"),
                      rs.getInt("max_size"),
                      rs.getBoolean("dead_letter_queue"),
                      rs.getInt("retention_seconds"),
                      rs.getInt("completed_retention_seconds"),
                      rs.getBoolean("retention_enabled")));
            }
          }
        });
  }

  /**
   * A page of the queue's partitions by name with their counts, and how many partitions the queue
   * has.
   */
  public Page<PartitionStats> partitions(UUID queueId, int limit, int offset) {
    return db.autocommit(c -> Page.read((l, o) -> partitions(c, queueId, l, o), limit, offset));
  }

  private static Page<PartitionStats> partitions(Connection c, UUID queueId, int limit, int offset)
      throws SQLException {
    List<PartitionStats> out = new ArrayList<>();
    long total = 0;
    try (PreparedStatement ps =
        c.prepareStatement("select * from queen.queue_partitions_v2(?, ?, ?)")) {
      ps.setObject(1, queueId);
      ps.setInt(2, limit);
      ps.setInt(3, offset);
      try (ResultSet rs = ps.executeQuery()) {
        while (rs.next()) {
          total = rs.getLong("partition_count");
          out.add(
              new PartitionStats(
                  rs.getObject("id", UUID.class),
                  rs.getString("name"),
                  Sql.instant(rs, "created_at"),
                  rs.getLong("total"),
                  rs.getLong("pending"),
                  rs.getLong("processing"),
                  rs.getLong("completed"),
                  rs.getLong("dead_letter"),
                  rs.getLong("total_consumed"),
                  Sql.instant(rs, "last_activity"),
                  Sql.instant(rs, "oldest_message"),
                  Sql.instant(rs, "newest_message"),
                  rs.getLong("last_offset")));
        }
      }
    }
    return new Page<>(out, total);
  }

  /** A page of partitions (of one queue, or all), most recently written first, and the total. */
  public Page<PartitionSummary> partitionList(String queue, int limit, int offset) {
    return db.autocommit(c -> Page.read((l, o) -> partitionList(c, queue, l, o), limit, offset));
  }

  private static Page<PartitionSummary> partitionList(
      Connection c, String queue, int limit, int offset) throws SQLException {
    List<PartitionSummary> out = new ArrayList<>();
    long total = 0;
    try (PreparedStatement ps =
        c.prepareStatement("select * from queen.partitions_list_v1(?, ?, ?)")) {
      ps.setString(1, queue);
      ps.setInt(2, limit);
      ps.setInt(3, offset);
      try (ResultSet rs = ps.executeQuery()) {
        while (rs.next()) {
          total = rs.getLong("total");
          out.add(
              new PartitionSummary(
                  rs.getObject("id", UUID.class),
                  rs.getString("name"),
                  rs.getString("queue_name"),
                  Sql.instant(rs, "created_at"),
                  rs.getLong("last_offset"),
                  rs.getLong("retained"),
                  Sql.instant(rs, "last_activity")));
        }
      }
    }
    return new Page<>(out, total);
  }

  public List<QueueSummary> queues() {
    return db.autocommit(
        c -> {
          List<QueueSummary> out = new ArrayList<>();
          try (PreparedStatement ps = c.prepareStatement("select * from queen.queue_list_v1()");
              ResultSet rs = ps.executeQuery()) {
            while (rs.next()) {
              out.add(
                  new QueueSummary(
                      rs.getObject("id", UUID.class),
                      rs.getString("name"),
                      rs.getString("namespace"),
                      rs.getString("task"),
                      Sql.instant(rs, "created_at"),
                      rs.getLong("partitions"),
                      rs.getLong("total"),
                      rs.getLong("pending"),
                      rs.getLong("processing")));
            }
          }
          return out;
        });
  }

  public List<GroupSummary> consumerGroups() {
    return db.autocommit(
        c -> {
          List<GroupSummary> out = new ArrayList<>();
          try (PreparedStatement ps =
                  c.prepareStatement("select * from queen.consumer_groups_v1()");
              ResultSet rs = ps.executeQuery()) {
            while (rs.next()) {
              out.add(
                  new GroupSummary(
                      rs.getString("consumer_group"),
                      rs.getString("queue_name"),
                      rs.getLong("members"),
                      rs.getLong("partitions_with_lag"),
                      rs.getLong("total_lag"),
                      rs.getLong("max_time_lag_seconds"),
                      Sql.instant(rs, "last_consumed_at"),
                      rs.getString("subscription_mode"),
                      Sql.instant(rs, "subscription_timestamp"),
                      Sql.instant(rs, "subscription_created_at")));
            }
          }
          return out;
        });
  }
}
