package queen.server.store;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;

/** Applies acknowledgements: the only thing that moves a cursor. */
public final class AckStore {
  private static final String ACK = "select * from queen.log_ack_v1(?, ?, ?, ?, ?, ?, null, ?)";
  private static final String EXTEND = "select * from queen.log_extend_lease_v1(?, ?, ?)";

  /**
   * Raised by log_ack_v1 when a transactionId's hash names several live messages of a partition:
   * the offsets must be read from the frames ({@link #offsets}).
   */
  static final String AMBIGUOUS = "QN003";

  /** An offset passed to log_ack_v1 for a message that is not stored. */
  private static final long ABSENT = -1;

  private static final String BATCH = "select * from queen.log_ack_batch_v1(?, ?, ?)";

  private final Database db;

  public AckStore(Database db) {
    this.db = db;
  }

  /**
   * Applies the acks of one group atomically; outcomes come back in input order. Acks that can only
   * complete are one statement in autocommit mode (one round trip). Acks that may dead-letter need
   * a transaction: the dead letter rows are written after the function moved the cursor, and both
   * commit together.
   */
  public List<AckOutcome> ack(String group, List<AckItem> items) {
    boolean completesOnly =
        items.stream()
            .allMatch(i -> i.status().equals("completed") || i.status().equals("success"));
    Long[] offsets = null;
    while (true) {
      Long[] known = offsets;
      try {
        return completesOnly
            ? db.autocommit(c -> call(c, group, items, false, known))
            : db.transaction(c -> call(c, group, items, false, known));
      } catch (StoreException e) {
        if (!AMBIGUOUS.equals(e.sqlState()) || offsets != null) {
          throw e;
        }
        offsets = db.autocommit(c -> offsets(c, items));
      }
    }
  }

  /**
   * The offset of each item's message, read from the frames of every candidate the transactionId
   * index names: the one message that carries the transactionId, or {@link #ABSENT}.
   */
  static Long[] offsets(Connection c, List<AckItem> items) throws SQLException {
    Long[] out = new Long[items.size()];
    java.util.Arrays.fill(out, ABSENT);
    List<TxnCandidates.Match> matches =
        TxnCandidates.read(
            c,
            items.stream().map(AckItem::partitionId).toList(),
            items.stream().map(AckItem::transactionId).toList());
    for (TxnCandidates.Match m : matches) {
      if (m.same()) {
        out[m.index()] = m.offset();
      }
    }
    return out;
  }

  /**
   * One call of queen.log_ack_v1 inside the caller's transaction, dead letters included. With
   * {@code transactional}, failed and dlq acks dead-letter at once. {@code offsets}, when known,
   * are the items' offsets as {@link #offsets} reads them; null lets the index resolve them.
   *
   * @throws SQLException with state {@link #AMBIGUOUS} when the index alone cannot resolve them
   */
  static List<AckOutcome> call(
      Connection c, String group, List<AckItem> items, boolean transactional, Long[] offsets)
      throws SQLException {
    List<AckOutcome> out = new ArrayList<>(items.size());
    List<DeadLetters.Entry> dead = new ArrayList<>();
    try (PreparedStatement ps = c.prepareStatement(ACK)) {
      ps.setString(1, group);
      ps.setArray(2, c.createArrayOf("uuid", items.stream().map(AckItem::partitionId).toArray()));
      ps.setArray(
          3,
          c.createArrayOf(
              "text", items.stream().map(AckItem::transactionId).toArray(String[]::new)));
      ps.setArray(4, c.createArrayOf("uuid", items.stream().map(AckItem::leaseId).toArray()));
      ps.setArray(
          5, c.createArrayOf("text", items.stream().map(AckItem::status).toArray(String[]::new)));
      ps.setBoolean(6, transactional);
      ps.setArray(7, offsets == null ? null : c.createArrayOf("bigint", offsets));
      try (ResultSet rs = ps.executeQuery()) {
        while (rs.next()) {
          AckOutcome o =
              new AckOutcome(
                  rs.getInt("idx"),
                  rs.getBoolean("success"),
                  rs.getString("error"),
                  rs.getString("queue_name"),
                  rs.getString("partition_name"),
                  rs.getBoolean("lease_released"),
                  rs.getBoolean("dlq"),
                  rs.getObject("partition_id", UUID.class),
                  rs.getString("consumer_group"),
                  rs.getBoolean("lease_ended"),
                  rs.getBoolean("has_more"));
          out.add(o);
          if (o.dlq()) {
            dead.add(
                new DeadLetters.Entry(
                    o.partitionId(),
                    o.group(),
                    rs.getLong("msg_offset"),
                    items.get(o.index()).error(),
                    rs.getInt("retry_count"),
                    true));
          }
        }
      }
    }
    DeadLetters.write(c, dead);
    return out;
  }

  /**
   * Whole leased batches acknowledged at once (the ack registry's fast path), one statement in
   * autocommit mode. An outcome that is not {@code success} changed nothing: the lease no longer
   * holds that batch, and the caller takes the general path for a precise answer.
   */
  public List<AckOutcome> ackBatches(List<BatchAck> batches) {
    return db.autocommit(
        c -> {
          try (PreparedStatement ps = c.prepareStatement(BATCH)) {
            ps.setArray(
                1, c.createArrayOf("uuid", batches.stream().map(BatchAck::partitionId).toArray()));
            ps.setArray(
                2, c.createArrayOf("uuid", batches.stream().map(BatchAck::leaseId).toArray()));
            ps.setArray(
                3,
                c.createArrayOf(
                    "bigint", batches.stream().map(BatchAck::batchEnd).toArray(Long[]::new)));
            List<AckOutcome> out = new ArrayList<>(batches.size());
            try (ResultSet rs = ps.executeQuery()) {
              while (rs.next()) {
                boolean acked = rs.getBoolean("acked");
                out.add(
                    new AckOutcome(
                        rs.getInt("idx"),
                        acked,
                        null,
                        rs.getString("queue_name"),
                        rs.getString("partition_name"),
                        acked,
                        false,
                        batches.get(rs.getInt("idx")).partitionId(),
                        rs.getString("consumer_group"),
                        acked,
                        rs.getBoolean("has_more")));
              }
            }
            return out;
          }
        });
  }

  /** What a lease extension found. */
  public enum ExtendStatus {
    EXTENDED,
    EXPIRED,
    MISSING
  }

  /** The outcome of extending a lease; {@code expiresAt} is set when extended. */
  public record Extension(ExtendStatus status, java.time.Instant expiresAt) {}

  /**
   * Extends every live lease of one worker id to at least now + seconds.
   *
   * @param partitions the lease's partitions when known (found by key), or null (found by scan)
   */
  public Extension extend(UUID workerId, int seconds, java.util.Collection<UUID> partitions) {
    return db.autocommit(
        c -> {
          try (PreparedStatement ps = c.prepareStatement(EXTEND)) {
            ps.setObject(1, workerId);
            ps.setInt(2, seconds);
            ps.setArray(
                3, partitions == null ? null : c.createArrayOf("uuid", partitions.toArray()));
            try (ResultSet rs = ps.executeQuery()) {
              rs.next();
              return new Extension(
                  ExtendStatus.valueOf(rs.getString("status").toUpperCase(java.util.Locale.ROOT)),
                  Sql.instant(rs, "expires_at"));
            }
          }
        });
  }
}
