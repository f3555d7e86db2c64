package queen.server.store;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;

/** Appends segments; the only writer of log_segments and the transactionId index. */
public final class PushStore {
  private static final String APPEND = "select * from queen.log_push_v1(?, ?, ?, ?, ?, ?, ?, ?, ?)";

  /** Raised by log_push_v1 when a partition no longer exists. */
  static final String MISSING_PARTITION = "QN001";

  /** Raised by log_push_v1 when a stored message hashes like a new transaction id. */
  static final String DUPLICATES_FOUND = "QN002";

  private final Database db;

  public PushStore(Database db) {
    this.db = db;
  }

  /**
   * Appends the segments, all or nothing; outcomes in input order. No transaction id may occur
   * twice within one partition. One call of {@code queen.log_push_v1} is one statement in
   * autocommit mode: the function and its commit take a single round trip, and the partition locks
   * are never held across a round trip to the broker. When stored messages with the hash of a new
   * transaction id make the call write nothing, their frames are read: real duplicates leave the
   * segments, hash collisions are named to the next call, which decides again under the locks.
   *
   * @throws PartitionMissingException if a partition was deleted since it was resolved
   */
  public List<AppendOutcome> append(List<SegmentWrite> segments) {
    return db.autocommit(
        c -> {
          Pending pending = new Pending(segments);
          while (true) {
            try {
              return pending.write(c);
            } catch (SQLException e) {
              if (!DUPLICATES_FOUND.equals(e.getSQLState())) {
                throw e;
              }
            }
            pending.learn(c);
          }
        });
  }

  /**
   * Segments to append, narrowed call by call: each call that writes nothing because stored
   * messages hash like new transaction ids is followed by {@link #learn}, and the next call knows
   * more.
   */
  static final class Pending {
    private final List<SegmentWrite> asked;
    private final SegmentWrite[] current;
    private final List<Map<String, UUID>> dups = new ArrayList<>();
    private final Collisions known = new Collisions();
    private int idle;

    Pending(List<SegmentWrite> segments) {
      this.asked = segments;
      this.current = segments.toArray(SegmentWrite[]::new);
      for (int i = 0; i < current.length; i++) {
        dups.add(new HashMap<>());
      }
    }

    /**
     * One call of queen.log_push_v1 in {@code c}'s transaction for the segments still to write;
     * outcomes in the order asked.
     *
     * @throws SQLException with state {@link #DUPLICATES_FOUND} when the call wrote nothing
     */
    List<AppendOutcome> write(Connection c) throws SQLException {
      List<Integer> live = new ArrayList<>();
      for (int i = 0; i < current.length; i++) {
        if (current[i] != null) {
          live.add(i);
        }
      }
      Placed[] where = new Placed[current.length];
      if (!live.isEmpty()) {
        List<Placed> placed = call(c, live.stream().map(i -> current[i]).toList(), known);
        for (int k = 0; k < live.size(); k++) {
          where[live.get(k)] = placed.get(k);
        }
      }
      List<AppendOutcome> out = new ArrayList<>(current.length);
      for (int i = 0; i < current.length; i++) {
        out.add(
            new AppendOutcome(
                asked.get(i).partitionId(),
                current[i],
                where[i] == null ? -1 : where[i].baseOffset(),
                where[i] == null ? null : where[i].createdAt(),
                dups.get(i)));
      }
      return out;
    }

    /**
     * Reads the frames the index named for the segments still to write: real duplicates leave their
     * segment (answered with the stored message's id), collisions are let through by the next call.
     * Nothing learned is let pass twice in a row: retention deleted the candidate after the call
     * saw it, and the next call no longer does.
     *
     * @throws IllegalStateException the third time in a row nothing was learned
     */
    void learn(Connection c) throws SQLException {
      boolean progress = false;
      List<Integer> owners = new ArrayList<>();
      List<UUID> pids = new ArrayList<>();
      List<String> txns = new ArrayList<>();
      for (int i = 0; i < current.length; i++) {
        if (current[i] == null) {
          continue;
        }
        for (String t : current[i].transactionIds()) {
          owners.add(i);
          pids.add(current[i].partitionId());
          txns.add(t);
        }
      }
      for (TxnCandidates.Match m : TxnCandidates.read(c, pids, txns)) {
        if (m.same()) {
          dups.get(owners.get(m.index())).put(txns.get(m.index()), m.messageId());
          progress = true;
        } else {
          progress |= known.add(m.partitionId(), m.offset());
        }
      }
      for (int i = 0; i < current.length; i++) {
        if (current[i] != null && !dups.get(i).isEmpty()) {
          current[i] = current[i].without(dups.get(i).keySet());
        }
      }
      idle = progress ? 0 : idle + 1;
      if (idle == 3) {
        throw new IllegalStateException(
            "push refused for a stored transaction id, but no stored message matches");
      }
    }
  }

  /** Where a segment was stored: its first offset and its created_at. */
  record Placed(long baseOffset, Instant createdAt) {}

  /** Stored messages read and found to be hash collisions, not duplicates: they allow a push. */
  static final class Collisions {
    private final List<UUID> partitionIds = new ArrayList<>();
    private final List<Long> offsets = new ArrayList<>();

    /** False when it was known already. */
    boolean add(UUID partitionId, long offset) {
      for (int i = 0; i < offsets.size(); i++) {
        if (offsets.get(i) == offset && partitionIds.get(i).equals(partitionId)) {
          return false;
        }
      }
      partitionIds.add(partitionId);
      offsets.add(offset);
      return true;
    }
  }

  /**
   * One call of queen.log_push_v1 in the caller's transaction; where each segment went.
   *
   * @throws PartitionMissingException when a partition no longer exists
   * @throws SQLException with state {@link #DUPLICATES_FOUND} when nothing was written because a
   *     stored message hashes like a new transaction id and is not among the known collisions
   */
  static List<Placed> call(Connection c, List<SegmentWrite> segments, Collisions known)
      throws SQLException {
    int n = segments.size();
    UUID[] partitions = new UUID[n];
    Integer[] counts = new Integer[n];
    byte[][] blobs = new byte[n][];
    Integer[] rawBytes = new Integer[n];
    List<Integer> msgSeg = new ArrayList<>();
    List<Integer> msgIdx = new ArrayList<>();
    List<String> txns = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      SegmentWrite s = segments.get(i);
      partitions[i] = s.partitionId();
      counts[i] = s.count();
      blobs[i] = s.blob();
      rawBytes[i] = s.rawBytes();
      for (int k = 0; k < s.count(); k++) {
        msgSeg.add(i + 1);
        msgIdx.add(k);
      }
      txns.addAll(s.transactionIds());
    }
    try (PreparedStatement ps = c.prepareStatement(APPEND)) {
      ps.setArray(1, c.createArrayOf("uuid", partitions));
      ps.setArray(2, c.createArrayOf("integer", counts));
      ps.setArray(3, c.createArrayOf("bytea", blobs));
      ps.setArray(4, c.createArrayOf("integer", msgSeg.toArray(Integer[]::new)));
      ps.setArray(5, c.createArrayOf("integer", msgIdx.toArray(Integer[]::new)));
      ps.setArray(6, c.createArrayOf("text", txns.toArray(String[]::new)));
      ps.setArray(7, c.createArrayOf("uuid", known.partitionIds.toArray()));
      ps.setArray(8, c.createArrayOf("bigint", known.offsets.toArray(Long[]::new)));
      ps.setArray(9, c.createArrayOf("integer", rawBytes));
      Placed[] placed = new Placed[n];
      try (ResultSet rs = ps.executeQuery()) {
        while (rs.next()) {
          placed[rs.getInt("seg") - 1] =
              new Placed(rs.getLong("base_offset"), Sql.instant(rs, "created_at"));
        }
      }
      return List.of(placed);
    } catch (SQLException e) {
      if (MISSING_PARTITION.equals(e.getSQLState())) {
        throw new PartitionMissingException();
      }
      throw e;
    }
  }
}
