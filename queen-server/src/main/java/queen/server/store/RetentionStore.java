package queen.server.store;

import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;

/** The retention functions: which queues and partitions have expired segments, and the deletes. */
public final class RetentionStore {
  private static final String CLAIM = "select queen.retention_claim_v1(?)";
  private static final String QUEUES = "select * from queen.retention_queues_v1()";
  private static final String CANDIDATES = "select * from queen.retention_candidates_v1(?, ?)";
  private static final String DELETE =
      "select * from queen.retention_delete_page_v3(?, ?, null, null, ?, ?)";
  private static final String DEAD_LETTERS =
      "select * from queen.retention_dead_letters_v2(?, ?, null, ?, ?)";
  private static final String DATE_CURSORS = "select * from queen.log_cursors_date_v1(?, ?, ?)";
  private static final String REMOVE = "select * from queen.partition_cleanup_v1(?, ?, ?)";

  /**
   * The broker's tables, whose old row versions it clears, and their statistics too (ops/Autovacuum
   * gathers them between cycles): without them a group's page of 1,000 cursors was planned as
   * 10,000 index probes (46 ms) instead of a hash join (18 ms).
   */
  private static final String VACUUM =
      AutovacuumStore.over("vacuum (skip_locked, analyze)", AutovacuumStore.TABLES);

  private final Database db;

  public RetentionStore(Database db) {
    this.db = db;
  }

  /** A queue whose retention is on; a setting of 0 is a rule that is off. */
  public record RetentionQueue(
      UUID id, String name, int retentionSeconds, int completedRetentionSeconds) {}

  /**
   * What one bounded delete removed, and how many of its partitions, from the first, are done: the
   * one after them may hold more.
   */
  public record Deleted(int segments, long messages, long bytes, int done) {}

  /** True for at most one broker per interval, however many ask. */
  public boolean claim(long intervalMillis) {
    return db.autocommit(
        c -> {
          try (PreparedStatement ps = c.prepareStatement(CLAIM)) {
            ps.setInt(1, (int) Math.min(intervalMillis, Integer.MAX_VALUE));
            try (ResultSet rs = ps.executeQuery()) {
              return rs.next() && rs.getBoolean(1);
            }
          }
        });
  }

  public List<RetentionQueue> queues() {
    return db.autocommit(
        c -> {
          List<RetentionQueue> out = new ArrayList<>();
          try (PreparedStatement ps = c.prepareStatement(QUEUES);
              ResultSet rs = ps.executeQuery()) {
            while (rs.next()) {
              out.add(
                  new RetentionQueue(
                      rs.getObject("queue_id", UUID.class),
                      rs.getString("queue_name"),
                      rs.getInt("retention_seconds"),
                      rs.getInt("completed_retention_seconds")));
            }
          }
          return out;
        });
  }

  /** Partitions of the queue whose oldest retained segment is older than the cutoff. */
  public List<UUID> candidates(UUID queueId, Instant cutoff) {
    return db.autocommit(
        c -> {
          try (PreparedStatement ps = c.prepareStatement(CANDIDATES)) {
            ps.setObject(1, queueId);
            Sql.setTimestamptz(ps, 2, cutoff);
            List<UUID> out = new ArrayList<>();
            try (ResultSet rs = ps.executeQuery()) {
              while (rs.next()) {
                out.add(rs.getObject(1, UUID.class));
              }
            }
            return out;
          }
        });
  }

  /**
   * One short transaction: deletes the expired segments of the partitions (all of one queue) in
   * turn, oldest first, at most {@code maxSegments} and {@code maxBytes} in all (at least one
   * segment): expired as of {@code now} by the queue's settings as they are when each partition is
   * locked, not as the cycle listed them.
   */
  public Deleted delete(List<UUID> partitionIds, Instant now, int maxSegments, long maxBytes) {
    return db.autocommit(
        c -> {
          try (PreparedStatement ps = c.prepareStatement(DELETE)) {
            ps.setArray(1, c.createArrayOf("uuid", partitionIds.toArray()));
            Sql.setTimestamptz(ps, 2, now);
            ps.setInt(3, maxSegments);
            ps.setLong(4, maxBytes);
            try (ResultSet rs = ps.executeQuery()) {
              rs.next();
              return new Deleted(
                  rs.getInt("segments"),
                  rs.getLong("messages"),
                  rs.getLong("bytes"),
                  rs.getInt("done"));
            }
          }
        });
  }

  /** What one call of {@link #deleteDeadLetters} deleted, and where the next one starts. */
  public record DeletedDeadLetters(int deleted, UUID after) {}

  /**
   * Deletes at most {@code max} dead letters of the queue dead-lettered more than its
   * retentionSeconds (as set now) before {@code now}, from its partitions after {@code after}
   * (null: from the first) in id order.
   */
  public DeletedDeadLetters deleteDeadLetters(UUID queueId, Instant now, UUID after, int max) {
    return db.autocommit(
        c -> {
          try (PreparedStatement ps = c.prepareStatement(DEAD_LETTERS)) {
            ps.setObject(1, queueId);
            Sql.setTimestamptz(ps, 2, now);
            ps.setObject(3, after);
            ps.setInt(4, max);
            try (ResultSet rs = ps.executeQuery()) {
              rs.next();
              return new DeletedDeadLetters(
                  rs.getInt("deleted"), rs.getObject("last_partition", UUID.class));
            }
          }
        });
  }

  /** What one pass of {@link #dateCursors} looked at: how many cursors, and the last one's key. */
  public record DatedCursors(int examined, UUID lastPartition, String lastGroup) {}

  /**
   * Dates the cursors that lack the date of their committed message (V17), looking at at most
   * {@code max} of them after the key given (null: from the first), in one transaction.
   */
  public DatedCursors dateCursors(UUID afterPartition, String afterGroup, int max) {
    return db.autocommit(
        c -> {
          try (PreparedStatement ps = c.prepareStatement(DATE_CURSORS)) {
            ps.setObject(1, afterPartition);
            ps.setString(2, afterGroup);
            ps.setInt(3, max);
            try (ResultSet rs = ps.executeQuery()) {
              rs.next();
              return new DatedCursors(rs.getInt(1), rs.getObject(2, UUID.class), rs.getString(3));
            }
          }
        });
  }

  /** What one page of {@link #removeInactive} looked at and removed, and where it ended. */
  public record Removal(int examined, int removed, UUID lastId) {}

  /**
   * One short transaction: looks at the next {@code max} partitions after {@code after} (null: from
   * the first), in id order, that retain no message and had no push since the cutoff, and removes
   * those still inactive since then, read under their locks, with their cursors.
   */
  public Removal removeInactive(Instant cutoff, UUID after, int max) {
    return db.autocommit(
        c -> {
          try (PreparedStatement ps = c.prepareStatement(REMOVE)) {
            Sql.setTimestamptz(ps, 1, cutoff);
            ps.setObject(2, after);
            ps.setInt(3, max);
            try (ResultSet rs = ps.executeQuery()) {
              rs.next();
              return new Removal(
                  rs.getInt("examined"), rs.getInt("removed"), rs.getObject("last_id", UUID.class));
            }
          }
        });
  }

  /** True when the server's autovacuum is off, so that nobody else reclaims deleted rows. */
  public boolean autovacuumOff() {
    return db.autocommit(
        c -> {
          try (Statement st = c.createStatement();
              ResultSet rs = st.executeQuery("select current_setting('autovacuum')")) {
            rs.next();
            return "off".equals(rs.getString(1));
          }
        });
  }

  /**
   * Makes the space of deleted rows and old row versions reusable and marks the pages written since
   * the last VACUUM all-visible: without it, inserts never reuse a page that deletes emptied, and
   * every read pays for dead versions and unset hint bits. Then gathers the planner's statistics.
   */
  public void vacuum() {
    db.autocommit(
        c -> {
          try (Statement st = c.createStatement()) {
            st.execute(VACUUM);
          }
          return null;
        });
  }
}
