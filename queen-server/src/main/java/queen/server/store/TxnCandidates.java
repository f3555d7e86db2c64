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
import queen.server.codec.SegmentCodec;

/**
 * Reads the stored messages that the transactionId index names for some (partition, transactionId)
 * pairs. The index is keyed by a 64-bit hash, so it names candidates; only the frame, which
 * PostgreSQL never opens, tells the message that carries the transactionId from one whose
 * transactionId merely hashes alike.
 */
final class TxnCandidates {
  private static final String CANDIDATES = "select * from queen.log_txn_candidates_v1(?, ?)";

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
    List<Match> out = new ArrayList<>();
    try (PreparedStatement ps = c.prepareStatement(CANDIDATES)) {
      ps.setArray(1, c.createArrayOf("uuid", partitionIds.toArray()));
      ps.setArray(2, c.createArrayOf("text", transactionIds.toArray(String[]::new)));
      try (ResultSet rs = ps.executeQuery()) {
        while (rs.next()) {
          int i = rs.getInt("idx");
          long offset = rs.getLong("msg_offset");
          int position = (int) (offset - rs.getLong("base_offset"));
          Frame f = SegmentCodec.decode(rs.getBytes("blob"), position, 1).getFirst();
          Instant created = Sql.instant(rs, "created_at");
          out.add(
              new Match(
                  i,
                  partitionIds.get(i),
                  offset,
                  f.transactionId().equals(transactionIds.get(i)),
                  MessageIds.of(partitionIds.get(i), offset, created),
                  created,
                  f));
        }
      }
    }
    return out;
  }
}
