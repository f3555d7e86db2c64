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
import queen.server.codec.Frame;
import queen.server.codec.SegmentCodec;

/**
 * The messages at some (partition, offset) pairs, each segment read and decoded once however many
 * of the pairs it holds: read once per pair, a retried push of 1,000 messages stored in one 5 MB
 * segment made PostgreSQL return (and spill to disk) 5 GB, and the broker hold and decode it all.
 */
final class SegmentsAt {
  private static final String BASES = "select * from queen.segments_at_v2(?, ?, false)";
  private static final String SEGMENTS = "select * from queen.segments_at_v2(?, ?, true)";

  /** A message found: its segment's first offset and creation time, and its frame. */
  record Found(long base, Instant createdAt, Frame frame) {}

  private SegmentsAt() {}

  /** The message at each pair, in pair order; null where retention deleted it. */
  static Found[] read(Connection c, List<UUID> partitionIds, List<Long> offsets)
      throws SQLException {
    Found[] out = new Found[partitionIds.size()];
    if (out.length == 0) {
      return out;
    }
    long[] bases = new long[out.length];
    boolean[] held = new boolean[out.length];
    List<UUID> segmentPartitions = new ArrayList<>();
    List<Long> segmentBases = new ArrayList<>();
    Map<String, Integer> segmentOf = new HashMap<>();
    try (PreparedStatement ps = c.prepareStatement(BASES)) {
      ps.setArray(1, c.createArrayOf("uuid", partitionIds.toArray()));
      ps.setArray(2, c.createArrayOf("bigint", offsets.toArray()));
      try (ResultSet rs = ps.executeQuery()) {
        while (rs.next()) {
          int i = rs.getInt("idx");
          bases[i] = rs.getLong("base_offset");
          held[i] = true;
          segmentOf.computeIfAbsent(
              partitionIds.get(i) + "/" + bases[i],
              k -> {
                segmentPartitions.add(partitionIds.get(i));
                segmentBases.add(bases[i]);
                return segmentBases.size() - 1;
              });
        }
      }
    }
    if (segmentBases.isEmpty()) {
      return out;
    }
    // the pairs each segment holds, filled as its row is read: one segment's body in memory at
    // a time, of only the frames asked for
    List<List<Integer>> pairsOf = new ArrayList<>();
    segmentBases.forEach(b -> pairsOf.add(new ArrayList<>()));
    for (int i = 0; i < out.length; i++) {
      if (held[i]) {
        pairsOf.get(segmentOf.get(partitionIds.get(i) + "/" + bases[i])).add(i);
      }
    }
    try (PreparedStatement ps = c.prepareStatement(SEGMENTS)) {
      ps.setArray(1, c.createArrayOf("uuid", segmentPartitions.toArray()));
      ps.setArray(2, c.createArrayOf("bigint", segmentBases.toArray()));
      try (ResultSet rs = ps.executeQuery()) {
        while (rs.next()) { // a segment retention deleted between the two reads has no row
          int segment = rs.getInt("idx");
          if (rs.getLong("base_offset") != segmentBases.get(segment)) {
            continue; // another one since: the partition removed and pushed again meanwhile
          }
          Instant created = Sql.instant(rs, "created_at");
          SegmentCodec.Body body = SegmentCodec.open(rs.getBytes("blob"));
          for (int i : pairsOf.get(segment)) {
            int position = (int) (offsets.get(i) - bases[i]);
            if (position < body.count()) {
              out[i] = new Found(bases[i], created, body.frames(position, 1).getFirst());
            }
          }
        }
      }
    }
    return out;
  }
}
