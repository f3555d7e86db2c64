package queen.server.store;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;

/** Appends segments; the only writer of log_segments and the transactionId index. */
public final class PushStore {
  private static final String APPEND = "select * from queen.log_push_v1(?, ?, ?, ?, ?, ?, ?)";
  private static final String DUPLICATES = "select * from queen.log_duplicates_v1(?, ?)";

  /** Raised by log_push_v1 when a partition no longer exists. */
  static final String MISSING_PARTITION = "QN001";

  /** Raised by log_push_v1 when a transaction id is already stored in its partition. */
  static final String DUPLICATES_FOUND = "QN002";

  private final Database db;

  public PushStore(Database db) {
    this.db = db;
  }

  /** Re-encodes a segment without the given duplicate transaction ids; null if none remain. */
  @FunctionalInterface
  public interface DuplicateRemover {
    SegmentWrite without(SegmentWrite segment, Set<String> duplicateTransactionIds);
  }

  /**
   * Appends the segments, all or nothing. No transaction id may occur twice within one partition.
   * One call of {@code queen.log_push_v1} is one statement in autocommit mode: the function and its
   * commit take a single round trip, and the partition locks are never held across a round trip to
   * the broker. When stored duplicates make the call write nothing, they are looked up, the
   * segments re-encoded without them, and the call repeats, deciding again under the locks.
   *
   * @throws PartitionMissingException if a partition was deleted since it was resolved
   */
  public List<AppendOutcome> append(List<SegmentWrite> segments, DuplicateRemover remover) {
    return db.autocommit(
        c -> {
          SegmentWrite[] current = segments.toArray(SegmentWrite[]::new);
          List<Map<String, UUID>> dups = new ArrayList<>();
          for (int i = 0; i < current.length; i++) {
            dups.add(new HashMap<>());
          }
          while (true) {
            List<Integer> live = new ArrayList<>();
            for (int i = 0; i < current.length; i++) {
              if (current[i] != null) {
                live.add(i);
              }
            }
            long[] bases = new long[current.length];
            if (live.isEmpty()) {
              return outcomes(current, bases, dups);
            }
            List<SegmentWrite> batch = live.stream().map(i -> current[i]).toList();
            try {
              long[] written = call(c, batch);
              for (int k = 0; k < live.size(); k++) {
                bases[live.get(k)] = written[k];
              }
              return outcomes(current, bases, dups);
            } catch (SQLException e) {
              if (!DUPLICATES_FOUND.equals(e.getSQLState())) {
                throw e;
              }
            }
            Map<UUID, Map<String, UUID>> stored = duplicates(c, batch);
            for (int i : live) {
              Map<String, UUID> found = stored.getOrDefault(current[i].partitionId(), Map.of());
              for (String txn : current[i].transactionIds()) {
                UUID owner = found.get(txn);
                if (owner != null) {
                  dups.get(i).put(txn, owner);
                }
              }
              if (!dups.get(i).isEmpty()) {
                current[i] = remover.without(current[i], dups.get(i).keySet());
              }
            }
          }
        });
  }

  private static List<AppendOutcome> outcomes(
      SegmentWrite[] written, long[] bases, List<Map<String, UUID>> dups) {
    List<AppendOutcome> out = new ArrayList<>(written.length);
    for (int i = 0; i < written.length; i++) {
      out.add(new AppendOutcome(written[i], written[i] == null ? -1 : bases[i], dups.get(i)));
    }
    return out;
  }

  /**
   * One call of queen.log_push_v1 in the caller's transaction; the base offset of each segment.
   *
   * @throws PartitionMissingException when a partition no longer exists
   * @throws SQLException with state {@link #DUPLICATES_FOUND} when nothing was written because of
   *     stored duplicates
   */
  static long[] call(Connection c, List<SegmentWrite> segments) throws SQLException {
    int n = segments.size();
    UUID[] partitions = new UUID[n];
    Integer[] counts = new Integer[n];
    byte[][] blobs = new byte[n][];
    List<Integer> msgSeg = new ArrayList<>();
    List<Integer> msgIdx = new ArrayList<>();
    List<String> txns = new ArrayList<>();
    List<UUID> ids = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      SegmentWrite s = segments.get(i);
      partitions[i] = s.partitionId();
      counts[i] = s.count();
      blobs[i] = s.blob();
      for (int k = 0; k < s.count(); k++) {
        msgSeg.add(i + 1);
        msgIdx.add(k);
      }
      txns.addAll(s.transactionIds());
      ids.addAll(s.messageIds());
    }
    try (PreparedStatement ps = c.prepareStatement(APPEND)) {
      ps.setArray(1, c.createArrayOf("uuid", partitions));
      ps.setArray(2, c.createArrayOf("integer", counts));
      ps.setArray(3, c.createArrayOf("bytea", blobs));
      ps.setArray(4, c.createArrayOf("integer", msgSeg.toArray()));
      ps.setArray(5, c.createArrayOf("integer", msgIdx.toArray()));
      ps.setArray(6, c.createArrayOf("text", txns.toArray()));
      ps.setArray(7, c.createArrayOf("uuid", ids.toArray()));
      long[] bases = new long[n];
      try (ResultSet rs = ps.executeQuery()) {
        while (rs.next()) {
          bases[rs.getInt("seg") - 1] = rs.getLong("base_offset");
        }
      }
      return bases;
    } catch (SQLException e) {
      if (MISSING_PARTITION.equals(e.getSQLState())) {
        throw new PartitionMissingException();
      }
      throw e;
    }
  }

  /** The stored duplicates among the segments' transaction ids, by partition. */
  private static Map<UUID, Map<String, UUID>> duplicates(Connection c, List<SegmentWrite> segments)
      throws SQLException {
    List<UUID> pids = new ArrayList<>();
    List<String> txns = new ArrayList<>();
    for (SegmentWrite s : segments) {
      for (String t : s.transactionIds()) {
        pids.add(s.partitionId());
        txns.add(t);
      }
    }
    Map<UUID, Map<String, UUID>> out = new HashMap<>();
    try (PreparedStatement ps = c.prepareStatement(DUPLICATES)) {
      ps.setArray(1, c.createArrayOf("uuid", pids.toArray()));
      ps.setArray(2, c.createArrayOf("text", txns.toArray()));
      try (ResultSet rs = ps.executeQuery()) {
        while (rs.next()) {
          out.computeIfAbsent(rs.getObject(1, UUID.class), k -> new HashMap<>())
              .put(rs.getString(2), rs.getObject(3, UUID.class));
        }
      }
    }
    return out;
  }
}
