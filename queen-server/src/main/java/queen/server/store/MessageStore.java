package queen.server.store;

import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.time.Instant;
import java.util.Arrays;
import java.util.List;
import java.util.Optional;
import java.util.UUID;
import queen.server.codec.Frame;
import queen.server.codec.SegmentCodec;

/** Finds one stored message by (partition, transactionId), as the admin routes name messages. */
public final class MessageStore {
  private static final String WHERE =
      "select q.id, q.name, p.name from queen.log_partitions p"
          + " join queen.queues q on q.id = p.queue_id where p.id = ?";

  private final Database db;

  public MessageStore(Database db) {
    this.db = db;
  }

  /** A message found in the log, with where it lives. */
  public record Stored(
      UUID queueId,
      String queue,
      String partition,
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
          Frame[] out = new Frame[partitionIds.size()];
          try (PreparedStatement ps =
              c.prepareStatement("select * from queen.segments_at_v1(?, ?)")) {
            ps.setArray(1, c.createArrayOf("uuid", partitionIds.toArray()));
            ps.setArray(2, c.createArrayOf("bigint", offsets.toArray()));
            try (ResultSet rs = ps.executeQuery()) {
              while (rs.next()) {
                int i = rs.getInt("idx");
                int position = (int) (offsets.get(i) - rs.getLong("base_offset"));
                out[i] = SegmentCodec.decode(rs.getBytes("blob"), position, 1).getFirst();
              }
            }
          }
          return Arrays.asList(out);
        });
  }

  /** The retained message of the partition carrying {@code transactionId}, if any. */
  public Optional<Stored> find(UUID partitionId, String transactionId) {
    return db.autocommit(
        c -> {
          TxnCandidates.Match found = null;
          for (TxnCandidates.Match m :
              TxnCandidates.read(c, List.of(partitionId), List.of(transactionId))) {
            if (m.same()) {
              found = m; // the newest wins, as for acks
            }
          }
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
