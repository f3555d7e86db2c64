package queen.server.store;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
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
   * Moves one message to the dead letters of every group whose cursor has not passed it, and of
   * every group subscribed to the queue that would still read it from this partition (of the queue
   * mode when no group has read the partition or subscribed), then deletes it from the log as
   * {@link #delete} does: a log cannot renumber, so the dead letter is the message's only live copy
   * and a requeue appends it anew. The groups it was dead-lettered for (none when every group had
   * consumed it); empty when there is no such retained message.
   */
  public Optional<List<String>> moveToDeadLetters(UUID partitionId, String transactionId) {
    try {
      return Optional.of(db.unbounded(c -> moveToDeadLetters(c, partitionId, transactionId)));
    } catch (Gone e) {
      return Optional.empty();
    }
  }

  private static List<String> moveToDeadLetters(Connection c, UUID partitionId, String txn)
      throws SQLException {
    TxnCandidates.Match m = MessageStore.newest(c, partitionId, txn);
    if (m == null) {
      throw new Gone();
    }
    List<String> groups = new ArrayList<>();
    boolean read = false;
    try (PreparedStatement ps =
        c.prepareStatement(
            "select consumer_group, committed < ? from queen.log_consumers where partition_id = ?")) {
      ps.setLong(1, m.offset());
      ps.setObject(2, partitionId);
      try (ResultSet rs = ps.executeQuery()) {
        while (rs.next()) {
          read = true;
          if (rs.getBoolean(2)) {
            groups.add(rs.getString(1));
          }
        }
      }
    }
    groups.addAll(subscribedWithoutCursor(c, partitionId, m.offset()));
    groups.sort(null);
    if (groups.isEmpty() && !read) {
      groups.add(MessageStore.QUEUE_MODE);
    }
    DeadLetters.write(
        c,
        groups.stream()
            .map(
                g ->
                    new DeadLetters.Entry(
                        partitionId,
                        g,
                        m.offset(),
                        "Moved to dead letter queue by admin",
                        0,
                        false))
            .toList());
    if (!markDeleted(c, partitionId, m.offset())) {
      // deleted or expired meanwhile: its dead letters go back with the transaction, or a retry
      // brought back a message the answer (404) said was not there
      throw new Gone();
    }
    return groups;
  }

  /** The message is not (or no longer) in the log: the transaction rolls back. */
  private static final class Gone extends RuntimeException {
    Gone() {
      super(null, null, false, false);
    }
  }

  /**
   * Groups subscribed to the partition's queue without a cursor on it yet whose subscription
   * delivers the message (mode all, or subscribed before it was written): their seed would hand it
   * out, so they get its dead letter as the groups behind it do.
   */
  private static List<String> subscribedWithoutCursor(Connection c, UUID partitionId, long offset)
      throws SQLException {
    java.time.OffsetDateTime written;
    try (PreparedStatement ps = c.prepareStatement("select queen.log_offset_created_at_v1(?, ?)")) {
      ps.setObject(1, partitionId);
      ps.setLong(2, offset);
      try (ResultSet rs = ps.executeQuery()) {
        rs.next();
        written = rs.getObject(1, java.time.OffsetDateTime.class);
      }
    }
    // the lookup of its date is a statement of its own: on Citus it cannot run inside this one
    try (PreparedStatement ps =
        c.prepareStatement(
            "select m.consumer_group from queen.consumer_groups_metadata m"
                + " join queen.log_partitions p on p.queue_id = m.queue_id where p.id = ?"
                + " and (m.subscription_timestamp is null or m.subscription_timestamp <= ?)"
                + " and not exists (select 1 from queen.log_consumers x"
                + " where x.partition_id = p.id and x.consumer_group = m.consumer_group)")) {
      ps.setObject(1, partitionId);
      ps.setObject(2, written);
      return column(ps);
    }
  }

  private static List<String> column(PreparedStatement ps) throws SQLException {
    List<String> out = new ArrayList<>();
    try (ResultSet rs = ps.executeQuery()) {
      while (rs.next()) {
        out.add(rs.getString(1));
      }
    }
    return out;
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
            "update queen.log_segments set blob = ?, raw_bytes = ?"
                + " where partition_id = ? and base_offset = ?")) {
      byte[] blob = SegmentCodec.encode(frames);
      ps.setBytes(1, blob);
      ps.setInt(2, SegmentCodec.rawLength(blob));
      ps.setObject(3, partitionId);
      ps.setLong(4, base);
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
