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
  private static final String APPEND = "select * from queen.log_push_v1(?, ?, ?, ?, ?, ?)";

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
   * Appends the segments in one transaction, all or nothing. Segments must be ordered by partition
   * id (see {@code queen.log_push_v1}) and hold no transaction id twice. In the common case this is
   * one round trip; a segment with stored duplicates costs one more, in the same transaction, still
   * holding its partition lock.
   *
   * @throws PartitionMissingException if a partition was deleted since it was resolved
   */
  public List<AppendOutcome> append(List<SegmentWrite> segments, DuplicateRemover remover) {
    return db.transaction(
        c -> {
          SegmentWrite[] current = segments.toArray(SegmentWrite[]::new);
          AppendOutcome[] out = new AppendOutcome[current.length];
          List<Map<String, UUID>> dups = new ArrayList<>();
          for (int i = 0; i < current.length; i++) {
            dups.add(new HashMap<>());
          }
          List<Integer> pending = new ArrayList<>();
          for (int i = 0; i < current.length; i++) {
            pending.add(i);
          }
          while (!pending.isEmpty()) {
            List<SegmentWrite> batch = pending.stream().map(i -> current[i]).toList();
            List<Integer> retry = new ArrayList<>();
            for (Row row : call(c, batch)) {
              int i = pending.get(row.seg() - 1);
              switch (row.status()) {
                case "queued" ->
                    out[i] = new AppendOutcome(current[i], row.baseOffset(), dups.get(i));
                case "duplicate" -> {
                  dups.get(i).putAll(row.duplicates());
                  SegmentWrite rest = remover.without(current[i], dups.get(i).keySet());
                  if (rest == null) {
                    out[i] = new AppendOutcome(null, -1, dups.get(i));
                  } else {
                    current[i] = rest;
                    retry.add(i);
                  }
                }
                case "missing" -> throw new PartitionMissingException(current[i].partitionId());
                default -> throw new IllegalStateException("log_push_v1 said " + row.status());
              }
            }
            pending = retry;
          }
          return List.of(out);
        });
  }

  private record Row(int seg, String status, long baseOffset, Map<String, UUID> duplicates) {}

  private static List<Row> call(Connection c, List<SegmentWrite> segments) throws SQLException {
    int n = segments.size();
    UUID[] partitions = new UUID[n];
    Integer[] counts = new Integer[n];
    byte[][] blobs = new byte[n][];
    Integer[] starts = new Integer[n];
    List<String> txns = new ArrayList<>();
    List<UUID> ids = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      SegmentWrite s = segments.get(i);
      partitions[i] = s.partitionId();
      counts[i] = s.count();
      blobs[i] = s.blob();
      starts[i] = txns.size() + 1;
      txns.addAll(s.transactionIds());
      ids.addAll(s.messageIds());
    }
    try (PreparedStatement ps = c.prepareStatement(APPEND)) {
      ps.setArray(1, c.createArrayOf("uuid", partitions));
      ps.setArray(2, c.createArrayOf("integer", counts));
      ps.setArray(3, c.createArrayOf("bytea", blobs));
      ps.setArray(4, c.createArrayOf("integer", starts));
      ps.setArray(5, c.createArrayOf("text", txns.toArray()));
      ps.setArray(6, c.createArrayOf("uuid", ids.toArray()));
      List<Row> rows = new ArrayList<>(n);
      try (ResultSet rs = ps.executeQuery()) {
        while (rs.next()) {
          Map<String, UUID> dups = new HashMap<>();
          java.sql.Array dtx = rs.getArray("dup_txn_ids");
          if (dtx != null) {
            String[] t = (String[]) dtx.getArray();
            UUID[] m = (UUID[]) rs.getArray("dup_msg_ids").getArray();
            for (int k = 0; k < t.length; k++) {
              dups.put(t[k], m[k]);
            }
          }
          rows.add(
              new Row(rs.getInt("seg"), rs.getString("status"), rs.getLong("base_offset"), dups));
        }
      }
      return rows;
    }
  }
}
