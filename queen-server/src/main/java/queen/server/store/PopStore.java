package queen.server.store;

import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.UUID;

/**
 * Claims work: calls the pop functions and returns raw segment slices for the broker to cut. Each
 * pop is one transaction; a parked long-poll holds no connection.
 */
public final class PopStore {
  private static final String SPECIFIC =
      "select * from queen.log_pop_specific_v1(?, ?, ?, ?, ?, ?, ?, ?, p_max_bytes => ?,"
          + " p_kept_bytes => ?)";
  private static final String WILDCARD =
      "select * from queen.log_pop_wildcard_v1(?, ?, ?, ?, ?, ?, ?, ?, p_max_bytes => ?,"
          + " p_kept_bytes => ?)";
  private static final String DISCOVER =
      "select * from queen.log_pop_discover_v1(?, ?, ?, ?, ?, ?, ?, ?, ?, p_max_bytes => ?,"
          + " p_kept_bytes => ?)";
  private static final String LIST =
      "select * from queen.log_pop_list_v1(?, ?, ?, ?, ?, ?, ?, ?, ?, false, p_max_bytes => ?,"
          + " p_kept_bytes => ?)";
  private static final String CANDIDATES =
      "select partition_name from queen.log_pop_candidates_v1(?, ?, ?)";
  private static final String SEED = "select * from queen.log_seed_group_v1(?, ?, ?, ?, ?, ?)";
  private static final String HAS_PENDING = "select queen.log_has_pending_v1(?, ?)";
  // by one partition: on Citus it goes to that partition's worker alone
  private static final String BLOBS =
      "select base_offset, blob from queen.log_segments where partition_id = ? and base_offset = any(?)";
  // ended a millisecond ago: a pop claims a lease that ended before its own now()
  private static final String GIVE_BACK =
      "update queen.log_consumers c set lease_expires_at = now() - interval '1 millisecond'"
          + " where c.partition_id = ? and c.consumer_group = ? and c.worker_id = ?"
          + " and c.lease_expires_at > now()";

  private final Database db;

  public PopStore(Database db) {
    this.db = db;
  }

  /** Claims from one named partition; nothing when the queue or partition does not exist. */
  public List<PartitionClaim> popSpecific(String queue, String partition, Claim claim) {
    return db.autocommit(
        c -> {
          try (PreparedStatement ps = c.prepareStatement(SPECIFIC)) {
            ps.setString(1, queue);
            ps.setString(2, partition);
            ps.setString(3, claim.group());
            ps.setObject(4, claim.workerId());
            ps.setInt(5, claim.batch());
            ps.setBoolean(6, claim.autoAck());
            ps.setString(7, claim.subscriptionMode());
            Sql.setTimestamptz(ps, 8, claim.from());
            ps.setLong(9, claim.maxBytes());
            ps.setLong(10, claim.keptBytes());
            return readClaims(ps);
          }
        });
  }

  /** The SQL wildcard scan over one queue; nothing when the queue does not exist. */
  public List<PartitionClaim> popWildcard(String queue, Claim claim) {
    return db.autocommit(
        c -> {
          try (PreparedStatement ps = c.prepareStatement(WILDCARD)) {
            ps.setString(1, queue);
            bindClaim(ps, 2, claim);
            return readClaims(ps);
          }
        });
  }

  /**
   * The hot-list path: claims from the named candidate partitions in order until enough were
   * claimed. Returns the claim of every candidate tried; candidates after the stop are absent.
   */
  public List<PartitionClaim> popList(String queue, List<String> names, Claim claim) {
    return db.autocommit(
        c -> {
          try (PreparedStatement ps = c.prepareStatement(LIST)) {
            ps.setString(1, queue);
            ps.setString(2, claim.group());
            ps.setArray(3, c.createArrayOf("text", names.toArray(String[]::new)));
            ps.setObject(4, claim.workerId());
            ps.setInt(5, claim.batch());
            ps.setInt(6, claim.partitions());
            ps.setBoolean(7, claim.autoAck());
            ps.setString(8, claim.subscriptionMode());
            Sql.setTimestamptz(ps, 9, claim.from());
            ps.setLong(10, claim.maxBytes());
            ps.setLong(11, claim.keptBytes());
            return readClaims(ps);
          }
        });
  }

  /** Names of partitions that may have messages the group can take now, at most {@code limit}. */
  public List<String> candidates(String queue, String group, int limit) {
    return db.autocommit(
        c -> {
          try (PreparedStatement ps = c.prepareStatement(CANDIDATES)) {
            ps.setString(1, queue);
            ps.setString(2, group);
            ps.setInt(3, limit);
            List<String> names = new ArrayList<>();
            try (ResultSet rs = ps.executeQuery()) {
              while (rs.next()) {
                names.add(rs.getString(1));
              }
            }
            return names;
          }
        });
  }

  /** The wildcard scan over every queue matching namespace and/or task (null matches any). */
  public List<PartitionClaim> popDiscover(String namespace, String task, Claim claim) {
    return db.autocommit(
        c -> {
          try (PreparedStatement ps = c.prepareStatement(DISCOVER)) {
            ps.setString(1, namespace);
            ps.setString(2, task);
            bindClaim(ps, 3, claim);
            return readClaims(ps);
          }
        });
  }

  /** One stored segment, by its partition and the offset of its first message. */
  public record SegmentKey(UUID partitionId, long baseOffset) {}

  /**
   * The stored blobs of segments whose pops got a stub ({@link SegmentSlice#leftOut}), in one
   * statement per partition. A segment deleted since (retention) is absent; one rewritten since (a
   * message delete) is read as it is now.
   */
  public Map<SegmentKey, byte[]> blobs(Collection<SegmentKey> keys) {
    Map<UUID, List<Long>> byPartition = new LinkedHashMap<>();
    keys.forEach(
        k ->
            byPartition
                .computeIfAbsent(k.partitionId(), p -> new ArrayList<>())
                .add(k.baseOffset()));
    return db.autocommit(
        c -> {
          Map<SegmentKey, byte[]> blobs = new HashMap<>();
          try (PreparedStatement ps = c.prepareStatement(BLOBS)) {
            for (Map.Entry<UUID, List<Long>> e : byPartition.entrySet()) {
              ps.setObject(1, e.getKey());
              ps.setArray(2, c.createArrayOf("bigint", e.getValue().toArray()));
              try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                  blobs.put(new SegmentKey(e.getKey(), rs.getLong(1)), rs.getBytes(2));
                }
              }
            }
          }
          return blobs;
        });
  }

  /**
   * Ends the lease {@code lease} of the group on these partitions now, as if it had expired: the
   * next pop takes its batch again from the cursor, with what was acked under it, and charges no
   * retry budget. One statement per partition (on Citus each goes to its partition's worker), in
   * partition order: the batch runs as one transaction, which takes the cursors in the house order.
   */
  public void giveBack(String group, UUID lease, Collection<UUID> partitionIds) {
    db.autocommit(
        c -> {
          try (PreparedStatement ps = c.prepareStatement(GIVE_BACK)) {
            for (UUID partitionId : partitionIds.stream().sorted(LockOrder.PARTITIONS).toList()) {
              ps.setObject(1, partitionId);
              ps.setString(2, group);
              ps.setObject(3, lease);
              ps.addBatch();
            }
            ps.executeBatch();
          }
          return null;
        });
  }

  /** What a bulk seed call found: matching queues, and how many of them are still unseeded. */
  public record Seeded(int matched, int pending) {}

  /**
   * The group-first-contact bulk seed for one queue, or for every queue matching namespace/task
   * when {@code queue} is null, in its own short transaction. Never waits: queues busy with another
   * seeder or with pops creating rows stay pending, for a later call.
   */
  public Seeded seedGroup(String queue, String namespace, String task, Claim claim) {
    return db.autocommit(
        c -> {
          try (PreparedStatement ps = c.prepareStatement(SEED)) {
            ps.setString(1, queue);
            ps.setString(2, namespace);
            ps.setString(3, task);
            ps.setString(4, claim.group());
            ps.setString(5, claim.subscriptionMode());
            Sql.setTimestamptz(ps, 6, claim.from());
            try (ResultSet rs = ps.executeQuery()) {
              rs.next();
              return new Seeded(rs.getInt("matched"), rs.getInt("pending"));
            }
          }
        });
  }

  /** False when the group has definitively nothing to take from the queue right now. */
  public boolean hasPending(String queue, String group) {
    return db.autocommit(
        c -> {
          try (PreparedStatement ps = c.prepareStatement(HAS_PENDING)) {
            ps.setString(1, queue);
            ps.setString(2, group);
            try (ResultSet rs = ps.executeQuery()) {
              rs.next();
              return rs.getBoolean(1);
            }
          }
        });
  }

  /**
   * Binds group, worker, batch, partitions, autoAck, mode, from, the byte budget and the kept bytes
   * from the given index on.
   */
  private static void bindClaim(PreparedStatement ps, int first, Claim claim) throws SQLException {
    ps.setString(first, claim.group());
    ps.setObject(first + 1, claim.workerId());
    ps.setInt(first + 2, claim.batch());
    ps.setInt(first + 3, claim.partitions());
    ps.setBoolean(first + 4, claim.autoAck());
    ps.setString(first + 5, claim.subscriptionMode());
    Sql.setTimestamptz(ps, first + 6, claim.from());
    ps.setLong(first + 7, claim.maxBytes());
    ps.setLong(first + 8, claim.keptBytes());
  }

  /**
   * Folds rows (one per delivered slice, or one verdict row) into one claim per partition. The rows
   * of one partition are contiguous; a partition is named by queue and name because a missing one
   * may have no id.
   */
  private static List<PartitionClaim> readClaims(PreparedStatement ps) throws SQLException {
    List<PartitionClaim> claims = new ArrayList<>();
    try (ResultSet rs = ps.executeQuery()) {
      PartitionClaim current = null;
      while (rs.next()) {
        String queue = rs.getString("queue_name");
        String partition = rs.getString("partition_name");
        Verdict verdict = Verdict.of(rs.getString("verdict"));
        if (current == null
            || !current.partition().equals(partition)
            || !Objects.equals(current.queue(), queue)) {
          current =
              new PartitionClaim(
                  rs.getObject("partition_id", UUID.class),
                  partition,
                  queue,
                  verdict,
                  Sql.instant(rs, "retry_at"),
                  rs.getInt("attempt"),
                  new ArrayList<>());
          claims.add(current);
        }
        if (verdict == Verdict.DELIVERED) {
          current
              .slices()
              .add(
                  new SegmentSlice(
                      rs.getLong("base_offset"),
                      rs.getInt("start_idx"),
                      rs.getInt("take"),
                      rs.getInt("msg_count"),
                      Sql.instant(rs, "created_at"),
                      rs.getBytes("blob")));
        }
      }
    }
    return claims;
  }
}
