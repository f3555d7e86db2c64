package queen.server.store;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import queen.server.codec.Frame;
import queen.server.codec.SegmentCodec;

/**
 * Taking one message out of the log, by delete or by a move to the dead letters. A log cannot
 * renumber: the frame stays in its segment with only its transactionId and a deleted mark, so the
 * other messages keep their offsets and ids and dedup still knows the transactionId.
 */
public final class MessageRemoval {
  private final Database db;

  public MessageRemoval(Database db) {
    this.db = db;
  }

  private static final String SEGMENT_FOR_UPDATE =
      "select base_offset, blob from queen.log_segments where partition_id = ? and base_offset <= ?"
          + " order by base_offset desc limit 1 for update";

  /**
   * Deletes one message: its frame in the segment is replaced by one that keeps only the
   * transactionId and says deleted, so offsets, message ids and dedup stay, and no pop delivers it
   * again (a lease that covers it acknowledges it). Its traces go. False when there is no such
   * retained message.
   */
  public boolean delete(UUID partitionId, String transactionId) {
    return db.unbounded(
        c -> {
          TxnCandidates.Match m = MessageStore.newest(c, partitionId, transactionId);
          return m != null && markDeleted(c, partitionId, m.offset());
        });
  }

  /**
   * Moves one message to the dead letters of every group whose cursor has not passed it (of the
   * queue mode when no group has), then deletes it from the log as {@link #delete} does: a log
   * cannot renumber, so the dead letter is the message's only live copy and a requeue appends it
   * anew. The groups it was dead-lettered for; empty when there is no such retained message.
   */
  public List<String> moveToDeadLetters(UUID partitionId, String transactionId) {
    return db.unbounded(
        c -> {
          TxnCandidates.Match m = MessageStore.newest(c, partitionId, transactionId);
          if (m == null) {
            return List.of();
          }
          List<String> groups = new ArrayList<>();
          try (PreparedStatement ps =
              c.prepareStatement(
                  "select consumer_group from queen.log_consumers"
                      + " where partition_id = ? and committed < ? order by consumer_group")) {
            ps.setObject(1, partitionId);
            ps.setLong(2, m.offset());
            try (ResultSet rs = ps.executeQuery()) {
              while (rs.next()) {
                groups.add(rs.getString(1));
              }
            }
          }
          if (groups.isEmpty()) {
            groups.add(MessageStore.QUEUE_MODE);
          }
          DeadLetters.write(
              c,
              groups.stream()
                  .map(
                      g ->
                          new DeadLetters.Entry(
                              partitionId, g, m.offset(), "Moved to dead letter queue by admin", 0))
                  .toList());
          return markDeleted(c, partitionId, m.offset()) ? groups : List.<String>of();
        });
  }

  private static boolean markDeleted(Connection c, UUID partitionId, long offset)
      throws SQLException {
    long base;
    List<Frame> frames;
    try (PreparedStatement ps = c.prepareStatement(SEGMENT_FOR_UPDATE)) {
      ps.setObject(1, partitionId);
      ps.setLong(2, offset);
      try (ResultSet rs = ps.executeQuery()) {
        if (!rs.next()) {
          return false; // retention took it meanwhile
        }
        base = rs.getLong(1);
        frames = new ArrayList<>(SegmentCodec.decode(rs.getBytes(2)));
      }
    }
    int i = (int) (offset - base);
    if (i >= frames.size() || frames.get(i).isDeleted()) {
      return false;
    }
    frames.set(i, frames.get(i).deleted());
    try (PreparedStatement ps =
        c.prepareStatement(
            "update queen.log_segments set blob = ? where partition_id = ? and base_offset = ?")) {
      ps.setBytes(1, SegmentCodec.encode(frames));
      ps.setObject(2, partitionId);
      ps.setLong(3, base);
      ps.executeUpdate();
    }
    try (PreparedStatement ps =
        c.prepareStatement(
            "delete from queen.message_traces where partition_id = ? and msg_offset = ?")) {
      ps.setObject(1, partitionId);
      ps.setLong(2, offset);
      ps.executeUpdate();
    }
    return true;
  }
}
