package queen.server.store;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import java.util.regex.Pattern;
import queen.server.codec.Frame;
import queen.server.codec.SegmentCodec;

/** Reads, requeues and sweeps dead letters. */
public final class DeadLetterStore {
  private static final String LIST = "select * from queen.dead_letters_v1(?, ?, ?, ?, ?, ?, ?, ?)";
  private static final String COUNT = "select queen.dead_letters_count_v1(?, ?, ?, ?, ?)";
  private static final String FIND =
      "select d.msg_offset, d.trace_id, d.producer_sub, d.flags, d.payload, q.name as queue_name,"
          + " p.name as partition_name from queen.dead_letters d"
          + " join queen.log_partitions p on p.id = d.partition_id"
          + " join queen.queues q on q.id = p.queue_id"
          + " where d.partition_id = ? and d.transaction_id = ?"
          // the group breaks a tie (an operator's move writes one letter per group at once):
          // two requeues that locked different letters of one message deadlocked
          + " order by d.failed_at desc, d.consumer_group limit 1 for update of d";
  private static final String REQUEUE = "select queen.log_requeue_v2(?, ?, ?, ?, ?, ?)";

  /** The suffixes of earlier requeues, at the end of a transactionId. */
  private static final Pattern REQUEUED =
      Pattern.compile("(:requeued:[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})+$");

  /**
   * A dead letter a leased batch wrote and would take back if given back or expired: past its
   * group's cursor, within the batch, among the offsets it acked (as R__30, R__40 and R__50 take
   * them back). An operator's move, and a letter the maxWait sweep wrote, is settled (V21).
   */
  private static final String UNSETTLED =
      "select d.consumer_group from queen.dead_letters d join queen.log_consumers c"
          + " on c.partition_id = d.partition_id and c.consumer_group = d.consumer_group"
          + " where d.partition_id = ? and d.msg_offset = ? and c.committed < d.msg_offset"
          + " and c.batch_end is not null and d.msg_offset <= c.batch_end"
          + " and d.msg_offset = any (c.acked_offsets) and d.leased"
          + " limit 1";

  /**
   * A requeue refused: a dead letter of the message is still inside its group's leased batch, and
   * goes back (the message delivered again) if that batch is given back or its lease expires.
   */
  public static final class Unsettled extends RuntimeException {
    public Unsettled(String group) {
      super(
          "The dead letter is inside a leased batch of consumer group "
              + group
              + ": it is taken back if the batch is given back or its lease expires, and the"
              + " message delivered again; requeue it once the group has moved past it",
          null,
          false,
          false);
    }
  }

  private static final String EXPIRE = "select * from queen.log_expire_waiting_v2(?)";
  private static final String SWEEP_CLAIM = "select queen.max_wait_claim_v1(?)";
  private static final String SWEEP_TOOK = "select queen.max_wait_took_v1(?)";

  private final Database db;

  public DeadLetterStore(Database db) {
    this.db = db;
  }

  /** Filters of a listing; null matches anything. */
  public record Filter(String queue, String group, String partition, Instant from, Instant to) {}

  /** One page of dead letters, newest first, and how many match in all. */
  public record Page(List<DeadLetter> letters, long total) {}

  /**
   * Up to {@code limit} letters from {@code offset}, ending with the one whose payload crosses
   * {@code maxBytes}.
   */
  public Page list(Filter f, int limit, int offset, long maxBytes) {
    return db.autocommit(
        c -> {
          List<DeadLetter> out = new ArrayList<>();
          try (PreparedStatement ps = c.prepareStatement(LIST)) {
            bindFilter(ps, f);
            ps.setInt(6, limit);
            ps.setInt(7, offset);
            ps.setLong(8, maxBytes);
            try (ResultSet rs = ps.executeQuery()) {
              while (rs.next()) {
                out.add(
                    new DeadLetter(
                        rs.getObject("partition_id", UUID.class),
                        rs.getString("partition_name"),
                        rs.getString("queue_name"),
                        rs.getString("consumer_group"),
                        rs.getLong("msg_offset"),
                        rs.getObject("message_id", UUID.class),
                        rs.getString("transaction_id"),
                        rs.getObject("trace_id", UUID.class),
                        rs.getString("producer_sub"),
                        rs.getShort("flags"),
                        rs.getBytes("payload"),
                        rs.getString("error_message"),
                        rs.getInt("retry_count"),
                        Sql.instant(rs, "created_at"),
                        Sql.instant(rs, "failed_at")));
              }
            }
          }
          try (PreparedStatement ps = c.prepareStatement(COUNT)) {
            bindFilter(ps, f);
            try (ResultSet rs = ps.executeQuery()) {
              rs.next();
              return new Page(out, rs.getLong(1));
            }
          }
        });
  }

  private static void bindFilter(PreparedStatement ps, Filter f) throws SQLException {
    ps.setString(1, f.queue());
    ps.setString(2, f.group());
    ps.setString(3, f.partition());
    Sql.setTimestamptz(ps, 4, f.from());
    Sql.setTimestamptz(ps, 5, f.to());
  }

  /** A dead letter put back into its partition at {@code offset} under a new transactionId. */
  public record Requeued(
      String queue, String partition, long offset, String transactionId, int payloadBytes) {}

  /**
   * Appends the newest dead letter of (partition, transactionId) to its partition again, as a new
   * message (a new offset, so a new id) with the transactionId {@code <original>:requeued:<newId>}
   * (one suffix however often it is requeued: a suffix each, an id grew past what the dead letters'
   * index holds), and removes the dead letters of that message (every group's, at its offset): an
   * older message of the same transactionId (pushed again once the first was gone) keeps its own,
   * for the next requeue. Empty when there is no such dead letter.
   *
   * @throws Unsettled while a group's cursor has not passed one of its dead letters: requeued, the
   *     message went out twice when the batch came again
   */
  public Optional<Requeued> requeue(UUID partitionId, String transactionId, UUID newId) {
    return db.transaction(
        c -> {
          Frame frame;
          String queue;
          String partition;
          long offset;
          try (PreparedStatement ps = c.prepareStatement(FIND)) {
            ps.setObject(1, partitionId);
            ps.setString(2, transactionId);
            try (ResultSet rs = ps.executeQuery()) {
              if (!rs.next()) {
                return Optional.empty();
              }
              offset = rs.getLong("msg_offset");
              queue = rs.getString("queue_name");
              partition = rs.getString("partition_name");
              frame =
                  new Frame(
                      REQUEUED.matcher(transactionId).replaceFirst("") + ":requeued:" + newId,
                      rs.getObject("trace_id", UUID.class),
                      rs.getString("producer_sub"),
                      rs.getShort("flags"),
                      rs.getBytes("payload"));
            }
          }
          try (PreparedStatement ps = c.prepareStatement(UNSETTLED)) {
            ps.setObject(1, partitionId);
            ps.setLong(2, offset);
            try (ResultSet rs = ps.executeQuery()) {
              if (rs.next()) {
                throw new Unsettled(rs.getString(1));
              }
            }
          }
          try (PreparedStatement ps = c.prepareStatement(REQUEUE)) {
            ps.setObject(1, partitionId);
            ps.setString(2, transactionId);
            ps.setString(3, frame.transactionId());
            byte[] blob = SegmentCodec.encode(List.of(frame));
            ps.setBytes(4, blob);
            ps.setInt(5, SegmentCodec.rawLength(blob));
            ps.setLong(6, offset);
            try (ResultSet rs = ps.executeQuery()) {
              rs.next();
              return Optional.of(
                  new Requeued(
                      queue,
                      partition,
                      rs.getLong(1),
                      frame.transactionId(),
                      frame.payload().length));
            }
          }
        });
  }

  /**
   * Whether this broker sweeps now: once per {@code intervalMillis} among the brokers of the
   * database, and at most a tenth of the time when the last scan took long.
   */
  public boolean claimSweep(long intervalMillis) {
    return db.autocommit(
        c -> {
          try (PreparedStatement ps = c.prepareStatement(SWEEP_CLAIM)) {
            ps.setInt(1, (int) Math.min(intervalMillis, Integer.MAX_VALUE));
            try (ResultSet rs = ps.executeQuery()) {
              return rs.next() && rs.getBoolean(1);
            }
          }
        });
  }

  /** Records what the claiming broker's last scan took, which spaces the next claims. */
  public void sweepTook(long millis) {
    db.autocommit(
        c -> {
          try (PreparedStatement ps = c.prepareStatement(SWEEP_TOOK)) {
            ps.setInt(1, (int) Math.min(millis, Integer.MAX_VALUE));
            ps.execute();
          }
          return null;
        });
  }

  /**
   * What {@link #expireWaiting} moved, by queue, and how long its scan took (its statement alone:
   * not the wait for a connection, the dead letters' write or the commit).
   */
  public record Expired(Map<String, Integer> byQueue, long scanNanos) {}

  /**
   * Dead-letters up to {@code maxMessages} messages that waited longer than their queue's
   * maxWaitTimeSeconds, moving the cursors past them.
   */
  public Expired expireWaiting(int maxMessages) {
    return db.transaction(c -> expire(c, maxMessages));
  }

  private static Expired expire(Connection c, int maxMessages) throws SQLException {
    List<DeadLetters.Entry> entries = new ArrayList<>();
    Map<String, Integer> byQueue = new LinkedHashMap<>();
    long started = System.nanoTime();
    try (PreparedStatement ps = c.prepareStatement(EXPIRE)) {
      ps.setInt(1, maxMessages);
      try (ResultSet rs = ps.executeQuery()) {
        while (rs.next()) {
          UUID pid = rs.getObject("partition_id", UUID.class);
          String group = rs.getString("consumer_group");
          long first = rs.getLong("base_offset") + rs.getInt("start_idx");
          String why = "Waited longer than maxWaitTimeSeconds (" + rs.getInt("max_wait") + " s)";
          for (int k = 0; k < rs.getInt("take"); k++) {
            entries.add(new DeadLetters.Entry(pid, group, first + k, why, 0, false));
          }
          byQueue.merge(rs.getString("queue_name"), rs.getInt("take"), Integer::sum);
        }
      }
    }
    long scanNanos = System.nanoTime() - started;
    DeadLetters.write(c, entries);
    return new Expired(byQueue, scanNanos);
  }

  /** How many partitions hold dead letters, with the most frequent errors among the newest. */
  public record Summary(long partitions, Map<String, Long> topErrors) {}

  /** The summary of the dead letters of {@code queues} (null: of every queue). */
  public Summary summary(List<String> queues) {
    return db.autocommit(
        c -> {
          long partitions = 0;
          Map<String, Long> errors = new LinkedHashMap<>();
          try (PreparedStatement ps =
              c.prepareStatement("select * from queen.dead_letter_summary_v2(?)")) {
            ps.setArray(1, queues == null ? null : c.createArrayOf("text", queues.toArray()));
            try (ResultSet rs = ps.executeQuery()) {
              while (rs.next()) {
                partitions = rs.getLong("partitions");
                String error = rs.getString("error_message");
                if (error != null) {
                  errors.put(error, rs.getLong("error_count"));
                }
              }
            }
          }
          return new Summary(partitions, errors);
        });
  }
}
