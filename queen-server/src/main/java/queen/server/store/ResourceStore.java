package queen.server.store;

import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;

/** The operator's views of queues and consumer groups, and the queue delete. */
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

  /** Deletes the queue and everything stored under it; false if it did not exist. */
  public boolean deleteQueue(String name) {
    return db.autocommit(
        c -> {
          try (PreparedStatement ps = c.prepareStatement("select queen.queue_delete_v1(?)")) {
            ps.setString(1, name);
            try (ResultSet rs = ps.executeQuery()) {
              rs.next();
              return rs.getBoolean(1);
            }
          }
        });
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
