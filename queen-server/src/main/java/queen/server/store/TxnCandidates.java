package queen.server.store;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import queen.server.codec.Frame;
import queen.server.codec.MessageIds;

/**
 * Reads the stored messages that the transactionId index names for some (partition, transactionId)
 * pairs. The index is keyed by a 64-bit hash, so it names candidates; only the frame, which
 * PostgreSQL never opens, tells the message that carries the transactionId from one whose
 * transactionId merely hashes alike.
 */
final class TxnCandidates {
  private static final String CANDIDATES = "select * from queen.log_txn_candidates_v2(?, ?)";

  /**
   * A stored message whose transactionId hashes like the one asked for at {@code index}.
   *
   * @param same true when it carries exactly that transactionId
   */
  record Match(
      int index,
      UUID partitionId,
      long offset,
      boolean same,
      UUID messageId,
      Instant createdAt,
      Frame frame) {}

  private TxnCandidates() {}

  /** Every live candidate of every pair, in pair order. */
  static List<Match> read(Connection c, List<UUID> partitionIds, List<String> transactionIds)
      throws SQLException {
    List<Integer> pairs = new ArrayList<>();
    List<UUID> pids = new ArrayList<>();
    List<Long> offsets = new ArrayList<>();
    try (PreparedStatement ps = c.prepareStatement(CANDIDATES)) {
      ps.setArray(1, c.createArrayOf("uuid", partitionIds.toArray()));
      ps.setArray(2, c.createArrayOf("text", transactionIds.toArray(String[]::new)));
      try (ResultSet rs = ps.executeQuery()) {
        while (rs.next()) {
          int i = rs.getInt("idx");
          pairs.add(i);
          pids.add(partitionIds.get(i));
          offsets.add(rs.getLong("msg_offset"));
        }
      }
    }
    SegmentsAt.Found[] found = SegmentsAt.read(c, pids, offsets);
    List<Match> out = new ArrayList<>(found.length);
    for (int k = 0; k < found.length; k++) {
      SegmentsAt.Found f = found[k];
      if (f == null) {
        continue; // retention deleted it meanwhile
      }
      int i = pairs.get(k);
      long offset = offsets.get(k);
      out.add(
          new Match(
              i,
              pids.get(k),
              offset,
              f.frame().transactionId().equals(transactionIds.get(i)),
              MessageIds.of(pids.get(k), offset, f.createdAt()),
              f.createdAt(),
              f.frame()));
    }
    return out;
  }
}
