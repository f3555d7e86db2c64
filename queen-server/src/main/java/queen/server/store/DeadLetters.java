package queen.server.store;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Instant;
import java.util.Comparator;
import java.util.List;
import java.util.UUID;
import queen.server.codec.Frame;
import queen.server.codec.MessageIds;
import queen.server.codec.SegmentCodec;

/**
 * Writes dead letters inside the caller's transaction. PostgreSQL never opens a blob, so the
 * message is cut out of its segment here and copied whole (payload, ids, trace) into the dead
 * letter row: it outlives the segment's retention. A message whose segment retention deleted in the
 * meantime has expired, and one deleted by an operator keeps only its transactionId: there is
 * nothing left to dead-letter.
 */
final class DeadLetters {
  private static final String SEGMENT =
      "select base_offset, msg_count, created_at, blob from queen.log_segments"
          + " where partition_id = ? and base_offset <= ? order by base_offset desc limit 1";
  // a settled letter (an operator's, the sweep's) of a message a lease's ack dead-lettered first
  // makes that one settled too: taken back with the batch, the message was lost (the move deleted
  // its frame, so the batch skipped it)
  private static final String INSERT =
      "insert into queen.dead_letters as d (partition_id, consumer_group, msg_offset, message_id,"
          + " transaction_id, trace_id, producer_sub, flags, payload, error_message, retry_count,"
          + " created_at, leased) values (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
          + " on conflict (partition_id, consumer_group, msg_offset) do update set leased = false"
          + " where d.leased and not excluded.leased";

  /**
   * The lock a dead letter's foreign key takes, taken first and without waiting. A queue delete
   * holds its partitions for update and then deletes their cursors, one of which the caller holds:
   * waiting here closed a cycle that PostgreSQL's deadlock check could end by failing the delete.
   * Now the caller fails at once (55P03, a 503 its client retries: nothing was written) and the
   * delete goes on.
   */
  private static final String HOLD_PARTITION =
      "select 1 from queen.log_partitions where id = ? for key share nowait";

  /**
   * A message to dead-letter: where it is and why; {@code leased} when a consumer's ack under a
   * lease wrote it, which the lease's batch takes back if it goes out again (V21).
   */
  record Entry(
      UUID partitionId, String group, long offset, String error, int retryCount, boolean leased) {}

  private DeadLetters() {}

  /** Dead-letters the entries, reading each segment they fall in once. */
  static void write(Connection c, List<Entry> entries) throws SQLException {
    if (entries.isEmpty()) {
      return;
    }
    List<Entry> sorted =
        entries.stream()
            .sorted(Comparator.comparing(Entry::partitionId).thenComparingLong(Entry::offset))
            .toList();
    try (PreparedStatement hold = c.prepareStatement(HOLD_PARTITION)) {
      // one statement a partition: Citus locks rows of one shard at a time
      for (UUID partition : sorted.stream().map(Entry::partitionId).distinct().toList()) {
        hold.setObject(1, partition);
        hold.executeQuery().close();
      }
    }
    try (PreparedStatement find = c.prepareStatement(SEGMENT);
        PreparedStatement insert = c.prepareStatement(INSERT)) {
      Segment segment = null;
      int rows = 0;
      for (Entry e : sorted) {
        if (segment == null || !segment.holds(e.partitionId(), e.offset())) {
          segment = read(find, e.partitionId(), e.offset());
        }
        if (segment == null) {
          continue;
        }
        Frame frame = segment.frames().get((int) (e.offset() - segment.base()));
        if (frame.isDeleted()) {
          continue;
        }
        insert.setObject(1, e.partitionId());
        insert.setString(2, e.group());
        insert.setLong(3, e.offset());
        insert.setObject(4, MessageIds.of(e.partitionId(), e.offset(), segment.createdAt()));
        insert.setString(5, frame.transactionId());
        insert.setObject(6, frame.traceId());
        insert.setString(7, frame.producerSub());
        insert.setShort(8, (short) frame.flags());
        insert.setBytes(9, frame.payload());
        insert.setString(10, e.error());
        insert.setInt(11, e.retryCount());
        Sql.setTimestamptz(insert, 12, segment.createdAt());
        insert.setBoolean(13, e.leased());
        insert.addBatch();
        rows++;
      }
      if (rows > 0) {
        insert.executeBatch();
      }
    }
  }

  private record Segment(UUID partitionId, long base, Instant createdAt, List<Frame> frames) {
    boolean holds(UUID partition, long offset) {
      return partitionId.equals(partition) && offset >= base && offset < base + frames.size();
    }
  }

  /** The segment holding the offset, or null when retention deleted it. */
  private static Segment read(PreparedStatement find, UUID partition, long offset)
      throws SQLException {
    find.setObject(1, partition);
    find.setLong(2, offset);
    try (ResultSet rs = find.executeQuery()) {
      if (!rs.next() || rs.getLong(1) + rs.getInt(2) <= offset) {
        return null;
      }
      return new Segment(
          partition,
          rs.getLong(1),
          Sql.instant(rs, "created_at"),
          SegmentCodec.decode(rs.getBytes(4)));
    }
  }
}
