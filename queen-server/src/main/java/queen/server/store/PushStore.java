package queen.server.store;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;

/** Appends segments; the only writer of log_segments and the transactionId index. */
public final class PushStore {
  private static final String APPEND = "select * from queen.log_push_v1(?, ?, ?, ?, ?, ?, ?)";

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
   * the broker. When the call finds stored duplicates it writes nothing; the segments are
   * re-encoded without them and the call repeats, deciding again under the locks.
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
            if (live.isEmpty()) {
              return outcomes(current, new long[current.length], dups);
            }
            List<Row> rows = call(c, live.stream().map(i -> current[i]).toList());
            String status = rows.getFirst().status();
            if (status.equals("queued")) {
              long[] bases = new long[current.length];
              for (Row row : rows) {
                bases[live.get(row.seg() - 1)] = row.baseOffset();
              }
              return outcomes(current, bases, dups);
            }
            if (status.equals("missing")) {
              throw new PartitionMissingException(
                  current[live.get(rows.getFirst().seg() - 1)].partitionId());
            }
            Set<Integer> touched = new HashSet<>();
            for (Row row : rows) {
              int i = live.get(row.seg() - 1);
              dups.get(i).put(row.dupTxnId(), row.dupMsgId());
              touched.add(i);
            }
            for (int i : touched) {
              current[i] = remover.without(current[i], dups.get(i).keySet());
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

  /** One answer row of queen.log_push_v1. */
  record Row(int seg, String status, long baseOffset, String dupTxnId, UUID dupMsgId) {}

  /** One call of queen.log_push_v1 inside the caller's transaction. */
  static List<Row> call(Connection c, List<SegmentWrite> segments) throws SQLException {
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
      List<Row> rows = new ArrayList<>();
      try (ResultSet rs = ps.executeQuery()) {
        while (rs.next()) {
          rows.add(
              new Row(
                  rs.getInt("seg"),
                  rs.getString("status"),
                  rs.getLong("base_offset"),
                  rs.getString("dup_txn_id"),
                  rs.getObject("dup_msg_id", UUID.class)));
        }
      }
      return rows;
    }
  }
}
