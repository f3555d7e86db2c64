package queen.server.store;

import java.math.BigDecimal;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Instant;
import java.util.List;
import java.util.UUID;
import java.util.function.Consumer;

/**
 * Streams: registered queries, their state per (query, source partition, key), and the cycle that
 * changes state, pushes and the source cursor in one transaction.
 */
public final class StreamStore {
  private static final String REGISTER = "select * from queen.streams_register_v1(?, ?, ?, ?, ?)";
  private static final String STATE =
      "select * from queen.streams_cycle_state_v1(?, ?, ?, ?::jsonb[])";
  private static final String ACK = "select * from queen.streams_ack_v2(?, ?, ?, ?, ?, ?, ?)";

  /** Whether the group's cursor of the partition holds a live lease; locked against a claim. */
  private static final String LEASED =
      "select c.worker_id is not null and c.lease_expires_at > now() from queen.log_consumers c"
          + " where c.partition_id = ? and c.consumer_group = ? for share";

  private static final String STATE_GET = "select * from queen.streams_state_get_v2(?, ?, ?, ?, ?)";

  private final Database db;

  public StreamStore(Database db) {
    this.db = db;
  }

  /**
   * A registration's answer: what is stored for the name. The stored hash and queues differ from
   * the ones asked when the query was registered with another configuration and not reset.
   */
  public record Registration(
      UUID queryId,
      boolean fresh,
      boolean reset,
      String registeredHash,
      String sourceQueue,
      String sinkQueue) {}

  /** Registers a query, or finds it; with {@code reset} replaces its hash and drops its state. */
  public Registration register(
      String name, String sourceQueue, String sinkQueue, String configHash, boolean reset) {
    return db.autocommit(
        c -> {
          try (PreparedStatement ps = c.prepareStatement(REGISTER)) {
            ps.setString(1, name);
            ps.setString(2, sourceQueue);
            ps.setString(3, sinkQueue);
            ps.setString(4, configHash);
            ps.setBoolean(5, reset);
            try (ResultSet rs = ps.executeQuery()) {
              rs.next();
              return new Registration(
                  rs.getObject("query_id", UUID.class),
                  rs.getBoolean("fresh"),
                  rs.getBoolean("was_reset"),
                  rs.getString("registered_hash"),
                  rs.getString("source_queue"),
                  rs.getString("sink_queue"));
            }
          }
        });
  }

  /** One state operation: an upsert of the key with a JSON text value, or a delete (null). */
  public record StateOp(String key, String json) {}

  /** One stored state value as JSON text. */
  public record StateRow(String key, String json, Instant updatedAt) {}

  /**
   * Which state rows a read wants, as Queen's runners ask: the keys (none: every key), a key prefix
   * (null: any), and windows whose {@code windowEnd} is at most an epoch-ms time (null: any value).
   */
  public record StateFilter(List<String> keys, String prefix, BigDecimal ripeBefore) {}

  /** Rows of a state read fetched from PostgreSQL at a time. */
  private static final int STATE_FETCH = 500;

  /**
   * Hands the stored values of one (query, partition) that the filter keeps to {@code each}, in key
   * order, fetched a page at a time: the runners read every key at each cycle, and a list of them
   * all, then a tree of it, held a big query's state three times over.
   */
  public void state(UUID queryId, UUID partitionId, StateFilter filter, Consumer<StateRow> each) {
    db.transaction(
        c -> {
          try (PreparedStatement ps = c.prepareStatement(STATE_GET)) {
            ps.setFetchSize(STATE_FETCH); // a cursor: only inside a transaction
            ps.setObject(1, queryId);
            ps.setObject(2, partitionId);
            ps.setArray(
                3,
                filter.keys().isEmpty() ? null : c.createArrayOf("text", filter.keys().toArray()));
            ps.setString(4, filter.prefix());
            ps.setBigDecimal(5, filter.ripeBefore());
            try (ResultSet rs = ps.executeQuery()) {
              while (rs.next()) {
                each.accept(
                    new StateRow(
                        rs.getString("key"), rs.getString("value"), Sql.instant(rs, "updated_at")));
              }
            }
            return null;
          }
        });
  }

  /**
   * The ack of a cycle: {@code completed} (or {@code success}) consumes the leased batch up to the
   * message; any other status is applied as by the ack route, under the lease.
   */
  public record CycleAck(String transactionId, UUID leaseId, String status, String error) {
    boolean positional() {
      return status.equals("completed") || status.equals("success");
    }
  }

  /**
   * What a cycle did: applied whole, or refused with the reason and nothing changed.
   *
   * @param sourceQueue the queue of the source partition (when applied)
   * @param ack the ack's outcome, or null for a cycle without one
   * @param acked the messages the ack consumed: a completed one the prefix up to its message
   */
  public record Cycle(
      boolean applied,
      String error,
      String sourceQueue,
      List<AppendOutcome> pushes,
      AckOutcome ack,
      long acked) {}

  /** An ack's outcome and the messages it consumed. */
  private record Acked(AckOutcome outcome, long messages) {}

  /**
   * Applies one cycle in one transaction: the state operations in order, then the pushes (a stored
   * transactionId is answered as a duplicate and written again nowhere), then the ack. Any refusal
   * (unknown query or partition, an ack the lease does not allow) rolls everything back.
   *
   * @param group the consumer group the lease must belong to
   * @param release whether a completed ack short of the batch's end releases the lease
   * @throws PartitionMissingException if a pushed partition was deleted since it was resolved
   */
  public Cycle cycle(
      UUID queryId,
      UUID partitionId,
      String group,
      List<StateOp> ops,
      List<SegmentWrite> pushes,
      CycleAck ack,
      boolean release) {
    PushStore.Pending pending = new PushStore.Pending(pushes);
    Long[] offset = null;
    while (true) {
      Long[] known = offset;
      try {
        return db.transaction(
            c -> {
              String source = applyState(c, queryId, partitionId, ops);
              List<AppendOutcome> appended = pending.write(c);
              Acked acked = null;
              if (ack == null) {
                unleased(c, partitionId, group);
              } else {
                boolean effects = !ops.isEmpty() || !pushes.isEmpty();
                acked = checkedAck(c, partitionId, group, ack, release, known, effects);
                if (!acked.outcome().success()) {
                  String why =
                      acked.outcome().error() == null
                          ? "Unsupported ack status"
                          : acked.outcome().error();
                  throw new Refused("ack failed: " + why);
                }
              }
              return acked == null
                  ? new Cycle(true, null, source, appended, null, 0)
                  : new Cycle(true, null, source, appended, acked.outcome(), acked.messages());
            });
      } catch (Refused r) {
        return new Cycle(false, r.getMessage(), null, List.of(), null, 0);
      } catch (StoreException e) {
        if (PushStore.DUPLICATES_FOUND.equals(e.sqlState())) {
          db.autocommit(
              c -> {
                pending.learn(c);
                return null;
              });
        } else if (AckStore.AMBIGUOUS.equals(e.sqlState()) && offset == null) {
          offset = db.autocommit(c -> AckStore.offsets(c, List.of(item(partitionId, ack))));
        } else {
          throw e;
        }
      }
    }
  }

  private static AckItem item(UUID partitionId, CycleAck ack) {
    return new AckItem(partitionId, ack.transactionId(), ack.leaseId(), ack.status(), ack.error());
  }

  /**
   * Locks the (query, partition), checks it, applies the state operations; the source queue.
   *
   * @throws Refused when the query or partition is unknown, or not the query's source
   */
  private static String applyState(Connection c, UUID queryId, UUID partitionId, List<StateOp> ops)
      throws SQLException {
    try (PreparedStatement ps = c.prepareStatement(STATE)) {
      ps.setObject(1, queryId);
      ps.setObject(2, partitionId);
      ps.setArray(3, c.createArrayOf("text", ops.stream().map(StateOp::key).toArray()));
      ps.setArray(4, c.createArrayOf("text", ops.stream().map(StateOp::json).toArray()));
      try (ResultSet rs = ps.executeQuery()) {
        rs.next();
        if (rs.getString("error") != null) {
          throw new Refused(rs.getString("error"));
        }
        return rs.getString("source_queue");
      }
    }
  }

  /**
   * Refuses a cycle without an ack (the runners' idle flush of ripe windows) while a worker of its
   * group holds the partition's lease: that worker read the state before the flush deleted a
   * window, and its acking cycle would write the window back, to be flushed a second time. Locked
   * where an acking cycle locks the cursor, after the pushes, so the lock order is the same.
   */
  private static void unleased(Connection c, UUID partitionId, String group) throws SQLException {
    try (PreparedStatement ps = c.prepareStatement(LEASED)) {
      ps.setObject(1, partitionId);
      ps.setString(2, group);
      try (ResultSet rs = ps.executeQuery()) {
        if (rs.next() && rs.getBoolean(1)) {
          throw new Refused(
              "partition "
                  + partitionId
                  + " is leased by a worker of consumer group "
                  + group
                  + ": a cycle without an ack waits for the lease to end");
        }
      }
    }
  }

  /**
   * The ack, checked against the lease by streams_ack_v2, which also applies a completed one; any
   * other status is then applied as the ack route applies it, at the message's offset.
   */
  private static Acked checkedAck(
      Connection c,
      UUID partitionId,
      String group,
      CycleAck ack,
      boolean release,
      Long[] offset,
      boolean effects)
      throws SQLException {
    try (PreparedStatement ps = c.prepareStatement(ACK)) {
      ps.setObject(1, partitionId);
      ps.setString(2, group);
      ps.setObject(3, ack.leaseId());
      ps.setString(4, ack.transactionId());
      if (offset == null) {
        ps.setNull(5, java.sql.Types.BIGINT);
      } else {
        ps.setLong(5, offset[0]);
      }
      ps.setString(6, ack.status());
      ps.setBoolean(7, release);
      AckOutcome checked;
      long at;
      long consumed;
      try (ResultSet rs = ps.executeQuery()) {
        rs.next();
        boolean ended = rs.getBoolean("lease_ended");
        at = rs.getLong("msg_offset");
        consumed = rs.getLong("consumed");
        checked =
            new AckOutcome(
                0,
                rs.getBoolean("success"),
                rs.getString("error"),
                rs.getString("queue_name"),
                rs.getString("partition_name"),
                ended,
                false,
                partitionId,
                group,
                ended,
                rs.getBoolean("has_more"));
      }
      if (!checked.success() || ack.positional()) {
        return new Acked(checked, consumed);
      }
      if (effects && "dlq".equals(ack.status()) && at != next(c, partitionId, group)) {
        // dead-lettered ahead of the cursor, its message goes out again with the batch if the
        // lease ends before the messages before it are acked: its effects would apply twice
        throw new Refused(
            "a dlq cycle can carry state_ops or push_items only for the next message of its"
                + " partition: an earlier message of the batch is not acknowledged yet");
      }
      return new Acked(
          AckStore.call(c, group, List.of(item(partitionId, ack)), false, new Long[] {at})
              .getFirst(),
          consumed);
    }
  }

  /**
   * The next message of (partition, group): after its cursor (locked by streams_ack_v2 in this
   * transaction), or the first retention kept.
   */
  private static long next(Connection c, UUID partitionId, String group) throws SQLException {
    try (PreparedStatement ps =
        c.prepareStatement(
            "select greatest(c.committed + 1, p.retained_from) from queen.log_consumers c"
                + " join queen.log_partitions p on p.id = c.partition_id"
                + " where c.partition_id = ? and c.consumer_group = ? and p.id = ?")) {
      ps.setObject(1, partitionId);
      ps.setString(2, group);
      ps.setObject(3, partitionId);
      try (ResultSet rs = ps.executeQuery()) {
        rs.next();
        return rs.getLong(1);
      }
    }
  }

  /** Rolls the cycle back with a reason for the client. */
  private static final class Refused extends RuntimeException {
    Refused(String message) {
      super(message, null, false, false);
    }
  }
}
