package queen.server.store;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.UUID;
import queen.server.codec.Frame;
import queen.server.codec.MessageIds;
import queen.server.codec.SegmentCodec;

/** Finds one stored message by (partition, transactionId), as the admin routes name messages. */
public final class MessageStore {
  /** The sentinel consumer group of plain work-queue consumption. */
  public static final String QUEUE_MODE = "__QUEUE_MODE__";

  private static final String WHERE =
      "select q.id, q.name, p.name, q.namespace, q.task, q.lease_time, q.retry_limit,"
          + " q.retry_delay, q.ttl, q.priority from queen.log_partitions p"
          + " join queen.queues q on q.id = p.queue_id where p.id = ?";

  private final Database db;

  public MessageStore(Database db) {
    this.db = db;
  }

  /** What a message list asks for; null fields do not filter. */
  public record Filter(
      String queue,
      String partition,
      String namespace,
      String task,
      String status,
      Instant from,
      Instant to) {}

  /** One message of a list: where it is, its queue-mode status, and its frame without payload. */
  public record Listed(
      UUID partitionId,
      long offset,
      UUID messageId,
      Instant createdAt,
      String queue,
      String partition,
      String namespace,
      String task,
      int priority,
      String status,
      String queueStatus,
      Instant leaseExpiresAt,
      int consumedBy,
      int totalGroups,
      Frame frame) {
    Listed withFrame(Frame f) {
      return new Listed(
          partitionId,
          offset,
          messageId,
          createdAt,
          queue,
          partition,
          namespace,
          task,
          priority,
          status,
          queueStatus,
          leaseExpiresAt,
          consumedBy,
          totalGroups,
          f);
    }
  }

  /** Where one message stands for one group. */
  public record GroupStatus(
      String group,
      boolean consumed,
      boolean leased,
      Instant leaseExpiresAt,
      boolean deadLettered,
      String errorMessage,
      int retryCount) {}

  /** The queue a found message belongs to, as the message detail shows it. */
  public record QueueInfo(
      String namespace,
      String task,
      int leaseTime,
      int retryLimit,
      int retryDelay,
      int ttl,
      int priority) {}

  /** The newest retained message carrying the transactionId, unless deleted; else null. */
  static TxnCandidates.Match newest(Connection c, UUID partitionId, String transactionId)
      throws SQLException {
    TxnCandidates.Match found = null;
    for (TxnCandidates.Match m :
        TxnCandidates.read(c, List.of(partitionId), List.of(transactionId))) {
      if (m.same()) {
        found = m; // the newest wins, as for acks
      }
    }
    return found == null || found.frame().isDeleted() ? null : found;
  }

  /** A message found in the log, with where it lives. */
  public record Stored(
      UUID queueId,
      String queue,
      String partition,
      QueueInfo queueInfo,
      UUID partitionId,
      long offset,
      UUID messageId,
      Instant createdAt,
      Frame frame) {}

  /**
   * The frames at each (partition, offset) pair, in pair order; null where retention deleted the
   * message.
   */
  public List<Frame> framesAt(List<UUID> partitionIds, List<Long> offsets) {
    if (partitionIds.isEmpty()) {
      return List.of();
    }
    return db.autocommit(
        c -> {
          List<Frame> out = new ArrayList<>(partitionIds.size());
          for (SegmentsAt.Found f : SegmentsAt.read(c, partitionIds, offsets)) {
            out.add(f == null ? null : f.frame());
          }
          return out;
        });
  }

  /**
   * A page of messages, newest first: one query for the page, one for the blobs of its segments
   * (each decoded once).
   */
  public List<Listed> list(Filter f, int limit, int offset) {
    return db.autocommit(
        c -> {
          List<Row> rows = new ArrayList<>();
          try (PreparedStatement ps =
              c.prepareStatement(
                  "select * from queen.messages_list_v1(?, ?, ?, ?, ?, ?, ?, ?, ?)")) {
            ps.setString(1, f.queue());
            ps.setString(2, f.partition());
            ps.setString(3, f.namespace());
            ps.setString(4, f.task());
            ps.setString(5, f.status());
            Sql.setTimestamptz(ps, 6, f.from());
            Sql.setTimestamptz(ps, 7, f.to());
            ps.setInt(8, limit);
            ps.setInt(9, offset);
            try (ResultSet rs = ps.executeQuery()) {
              while (rs.next()) {
                UUID pid = rs.getObject("partition_id", UUID.class);
                long off = rs.getLong("msg_offset");
                Instant created = Sql.instant(rs, "created_at");
                rows.add(
                    new Row(
                        new Listed(
                            pid,
                            off,
                            MessageIds.of(pid, off, created),
                            created,
                            rs.getString("queue_name"),
                            rs.getString("partition_name"),
                            rs.getString("namespace"),
                            rs.getString("task"),
                            rs.getInt("priority"),
                            rs.getString("status"),
                            rs.getString("queue_status"),
                            Sql.instant(rs, "lease_expires_at"),
                            rs.getInt("consumed_by"),
                            rs.getInt("total_groups"),
                            null),
                        rs.getLong("base_offset")));
              }
            }
          }
          Map<String, List<Frame>> segments = segments(c, rows);
          List<Listed> out = new ArrayList<>(rows.size());
          for (Row r : rows) {
            List<Frame> frames = segments.get(r.segmentKey());
            out.add(
                frames == null
                    ? r.listed()
                    : r.listed().withFrame(frames.get((int) (r.listed().offset() - r.base()))));
          }
          return out;
        });
  }

  /** A listed message before its frame is read, with its segment's first offset. */
  private record Row(Listed listed, long base) {
    String segmentKey() {
      return listed.partitionId() + "/" + base;
    }
  }

  private static Map<String, List<Frame>> segments(Connection c, List<Row> rows)
      throws SQLException {
    Map<String, List<Frame>> out = new HashMap<>();
    Set<String> keys = new LinkedHashSet<>();
    List<UUID> pids = new ArrayList<>();
    List<Long> bases = new ArrayList<>();
    for (Row r : rows) {
      if (keys.add(r.segmentKey())) {
        pids.add(r.listed().partitionId());
        bases.add(r.base());
      }
    }
    if (pids.isEmpty()) {
      return out;
    }
    try (PreparedStatement ps =
        c.prepareStatement("select * from queen.segments_at_v2(?, ?, true)")) {
      ps.setArray(1, c.createArrayOf("uuid", pids.toArray()));
      ps.setArray(2, c.createArrayOf("bigint", bases.toArray()));
      try (ResultSet rs = ps.executeQuery()) {
        while (rs.next()) {
          int i = rs.getInt("idx");
          out.put(pids.get(i) + "/" + bases.get(i), SegmentCodec.decode(rs.getBytes("blob")));
        }
      }
    }
    return out;
  }

  /** Where the message at {@code offset} stands for every group reading its partition. */
  public List<GroupStatus> groups(UUID partitionId, long offset) {
    return db.autocommit(
        c -> {
          List<GroupStatus> out = new ArrayList<>();
          try (PreparedStatement ps =
              c.prepareStatement("select * from queen.message_groups_v1(?, ?)")) {
            ps.setObject(1, partitionId);
            ps.setLong(2, offset);
            try (ResultSet rs = ps.executeQuery()) {
              while (rs.next()) {
                out.add(
                    new GroupStatus(
                        rs.getString("consumer_group"),
                        rs.getBoolean("consumed"),
                        rs.getBoolean("leased"),
                        Sql.instant(rs, "lease_expires_at"),
                        rs.getBoolean("dead_lettered"),
                        rs.getString("error_message"),
                        rs.getInt("retry_count")));
              }
            }
          }
          return out;
        });
  }

  /** The retained, undeleted message of the partition carrying {@code transactionId}, if any. */
  public Optional<Stored> find(UUID partitionId, String transactionId) {
    return db.autocommit(
        c -> {
          TxnCandidates.Match found = newest(c, partitionId, transactionId);
          if (found == null) {
            return Optional.empty();
          }
          try (PreparedStatement ps = c.prepareStatement(WHERE)) {
            ps.setObject(1, partitionId);
            try (ResultSet rs = ps.executeQuery()) {
              if (!rs.next()) {
                return Optional.empty();
              }
              return Optional.of(
                  new Stored(
                      rs.getObject(1, UUID.class),
                      rs.getString(2),
                      rs.getString(3),
                      new QueueInfo(
                          rs.getString(4),
                          rs.getString(5),
                          rs.getInt(6),
                          rs.getInt(7),
                          rs.getInt(8),
                          rs.getInt(9),
                          rs.getInt(10)),
                      partitionId,
                      found.offset(),
                      found.messageId(),
                      found.createdAt(),
                      found.frame()));
            }
          }
        });
  }
}
