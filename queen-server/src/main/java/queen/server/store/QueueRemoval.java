package queen.server.store;

import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.time.Instant;
import java.util.UUID;

/**
 * A queue cleared or deleted in short transactions of at most {@code batchSegments} segments (or
 * dead letters, or partitions) and {@code batchBytes} of segments (but one segment at least) each,
 * as retention deletes, of what was pushed before it began: in one transaction a big queue's
 * removal held every partition lock until its last segment was gone, so its pushes waited, and its
 * snapshot held back HOT pruning everywhere meanwhile. A removal cut short (a broker stopped, the
 * database away) leaves a queue partly cleared, as retention would, and a delete maybe some of its
 * partitions gone with their cursors; repeating it finishes it.
 */
public final class QueueRemoval {
  private static final String CLEAR_PAGE =
      "select * from queen.queue_clear_page_v2(?, ?, ?, ?, ?, ?, ?)";
  // as retention's dead-letter pages, with no age: every dead letter
  private static final String DEAD_LETTERS =
      "select * from queen.retention_dead_letters_v2(?, null, 'infinity', ?, ?)";

  private static final String PARTITIONS =
      "select * from queen.queue_delete_partitions_v1(?, ?, ?)";

  /** A queue delete's passes over what was pushed while it ran, at most. */
  private static final int MAX_PASSES = 5;

  private final Database db;
  private final int batchSegments;
  private final long batchBytes;

  public QueueRemoval(Database db, int batchSegments, long batchBytes) {
    this.db = db;
    this.batchSegments = batchSegments;
    this.batchBytes = batchBytes;
  }

  /** What a clear deleted; {@code queueFound} false for an unknown queue. */
  public record Cleared(boolean queueFound, int partitions, long messages) {}

  /** Deletes every message of the queue, or of one partition, keeping offsets. */
  public Cleared clear(String queue, String partition) {
    Progress p = clearPages(queue, partition, null);
    return new Cleared(p.queueId != null, p.partitions, p.messages);
  }

  /**
   * Deletes the queue and everything stored under it; false if it did not exist. Its messages, dead
   * letters and partitions go first, page by page; then the queue's row, with what was pushed
   * meanwhile.
   */
  public boolean delete(String name) {
    Progress cleared = clearPages(name, null, null);
    UUID queueId = cleared.queueId;
    if (queueId == null) {
      return false;
    }
    // what was pushed meanwhile, again while a pass deletes some and takes more than a page: the
    // last transaction holds every partition of the queue until it commits
    for (int pass = 1; pass < MAX_PASSES && cleared.pages > 1 && cleared.messages > 0; pass++) {
      cleared = clearPages(name, null, queueId);
      if (cleared.queueId == null) {
        return true; // deleted meanwhile
      }
    }
    RetentionStore.DeletedDeadLetters d = null;
    do {
      UUID after = d == null ? null : d.after();
      d =
          db.unbounded(
              c -> {
                try (PreparedStatement ps = c.prepareStatement(DEAD_LETTERS)) {
                  ps.setObject(1, queueId);
                  ps.setObject(2, after);
                  ps.setInt(3, batchSegments);
                  try (ResultSet rs = ps.executeQuery()) {
                    rs.next();
                    return new RetentionStore.DeletedDeadLetters(
                        rs.getInt("deleted"), rs.getObject("last_partition", UUID.class));
                  }
                }
              });
    } while (d.deleted() >= batchSegments);
    UUID after = null;
    do {
      after = deletePartitions(queueId, after);
    } while (after != null);
    return db.unbounded(
        c -> {
          try (PreparedStatement ps = c.prepareStatement("select queen.queue_delete_v1(?)")) {
            ps.setString(1, name);
            try (ResultSet rs = ps.executeQuery()) {
              rs.next();
              return rs.getBoolean(1);
            }
          }
        });
  }

  /**
   * One page of the queue's partitions after {@code after} removed with their cursors and index;
   * the last one's id, null once a page came short.
   */
  private UUID deletePartitions(UUID queueId, UUID after) {
    return db.unbounded(
        c -> {
          try (PreparedStatement ps = c.prepareStatement(PARTITIONS)) {
            ps.setObject(1, queueId);
            ps.setObject(2, after);
            ps.setInt(3, batchSegments);
            try (ResultSet rs = ps.executeQuery()) {
              rs.next();
              return rs.getInt("removed") < batchSegments
                  ? null
                  : rs.getObject("last_id", UUID.class);
            }
          }
        });
  }

  /** A clear's pages so far, and what was pushed before it began (the first page's time). */
  private static final class Progress {
    UUID queueId;
    int partitions;
    long messages;
    Instant before;
    int pages;
  }

  /**
   * The clear's pages, each in a transaction of its own without the admin statement timeout (a page
   * of big segments may take longer, and cancelled, it was rolled back and retried whole), as the
   * dead letters' pages are.
   */
  private Progress clearPages(String queue, String partition, UUID queueId) {
    Progress p = new Progress();
    p.queueId = queueId;
    UUID from = null;
    do {
      UUID start = from;
      from =
          db.unbounded(
              c -> {
                try (PreparedStatement ps = c.prepareStatement(CLEAR_PAGE)) {
                  ps.setString(1, queue);
                  ps.setString(2, partition);
                  ps.setObject(3, start);
                  ps.setInt(4, batchSegments);
                  Sql.setTimestamptz(ps, 5, p.before);
                  // after the first page, by id: a queue deleted and created again is another
                  ps.setObject(6, p.queueId);
                  ps.setLong(7, batchBytes);
                  try (ResultSet rs = ps.executeQuery()) {
                    rs.next();
                    p.queueId = rs.getObject("queue_id", UUID.class);
                    p.partitions += rs.getInt("partitions");
                    p.messages += rs.getLong("messages");
                    p.before = Sql.instant(rs, "started_at");
                    p.pages++;
                    return rs.getObject("resume_from", UUID.class);
                  }
                }
              });
    } while (from != null);
    return p;
  }
}
