package queen.server.store;

import static org.assertj.core.api.Assertions.assertThat;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.UUID;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import queen.server.TestBroker;
import queen.server.Wire;

/**
 * The transactionId index (the keys of each segment's messages under a GIN index), driven straight
 * through its lookups with segments of seeded random keys: every key is found at exactly its
 * offsets, the dedup check sees stored keys but not fresh ones, known collisions or keys below the
 * retention watermark, and a transactionId has a different key in every partition.
 */
class TxnIndexTest {
  @RegisterExtension static final TestBroker broker = new TestBroker();

  private final Wire wire = new Wire(broker);

  @Test
  void randomSegmentsKeepEveryKeyFindableAtExactlyItsOffsets() throws Exception {
    for (int seed = 0; seed < 4; seed++) {
      Random r = new Random(seed);
      UUID pid = partition("idx-" + seed);
      Map<Long, List<Long>> stored = new HashMap<>();
      long offset = 1;
      try (Connection c = broker.connect()) {
        for (int round = 0; round < 40; round++) {
          long[] keys = new long[1 + r.nextInt(r.nextInt(10) == 0 ? 700 : 40)];
          for (int i = 0; i < keys.length; i++) {
            // a few keys repeat: hash collisions, which the broker resolves by the frames
            keys[i] = r.nextInt(20) == 0 && !stored.isEmpty() ? any(stored, r) : r.nextLong();
            stored.computeIfAbsent(keys[i], k -> new ArrayList<>()).add(offset + i);
          }
          segment(c, pid, offset, keys);
          offset += keys.length;
        }
        for (Map.Entry<Long, List<Long>> e : stored.entrySet()) {
          assertThat(find(c, pid, e.getKey(), 0))
              .as("seed %d key %d", seed, e.getKey())
              .containsExactlyInAnyOrderElementsOf(e.getValue());
          assertThat(seen(c, pid, e.getKey(), 0, List.of()))
              .as("seed %d: a stored key is a candidate duplicate", seed)
              .isTrue();
          assertThat(seen(c, pid, e.getKey(), 0, e.getValue()))
              .as("seed %d: unless every message holding it is a known collision", seed)
              .isFalse();
        }
        for (int i = 0; i < 200; i++) {
          long fresh = r.nextLong();
          assertThat(seen(c, pid, fresh, 0, List.of()))
              .as("seed %d: a fresh key", seed)
              .isEqualTo(stored.containsKey(fresh));
        }
      }
    }
  }

  @Test
  void keysBelowTheRetentionWatermarkAreNeitherFoundNorDuplicates() throws Exception {
    UUID pid = partition("idx-retained");
    Random r = new Random(99);
    long[] keys = r.longs(500).toArray();
    try (Connection c = broker.connect()) {
      segment(c, pid, 1, Arrays.copyOfRange(keys, 0, 250));
      segment(c, pid, 251, Arrays.copyOfRange(keys, 250, 500));
      assertThat(find(c, pid, keys[10], 300)).as("below the watermark").isEmpty();
      assertThat(seen(c, pid, keys[10], 300, List.of())).isFalse();
      assertThat(find(c, pid, keys[450], 300)).containsExactly(451L);
      assertThat(seen(c, pid, keys[450], 300, List.of())).isTrue();
    }
  }

  @Test
  void oneTransactionIdHasADifferentKeyInEveryPartition() throws Exception {
    UUID a = partition("idx-reused-a");
    UUID b = partition("idx-reused-b");
    try (Connection c = broker.connect()) {
      long inA = key(c, a, "order-1");
      assertThat(key(c, b, "order-1")).isNotEqualTo(inA);
      segment(c, a, 1, new long[] {inA});
      assertThat(seen(c, a, inA, 0, List.of())).isTrue();
      assertThat(seen(c, b, key(c, b, "order-1"), 0, List.of()))
          .as("pushed to a, new to b")
          .isFalse();
    }
  }

  private static long any(Map<Long, List<Long>> stored, Random r) {
    List<Long> keys = new ArrayList<>(stored.keySet());
    return keys.get(r.nextInt(keys.size()));
  }

  /** A partition holding one pushed message at offset 0, whose key no test uses. */
  private UUID partition(String queue) {
    wire.pushNumbered(queue, "p", 0, 1);
    return UUID.fromString(
        broker.sqlText(
            "select p.id::text from queen.log_partitions p join queen.queues q on q.id ="
                + " p.queue_id where q.name = '"
                + queue
                + "'"));
  }

  /** A segment of the given keys at {@code base} (the blob is never read here). */
  private static void segment(Connection c, UUID pid, long base, long[] keys) throws Exception {
    try (PreparedStatement ps =
        c.prepareStatement(
            "insert into queen.log_segments (partition_id, base_offset, msg_count, created_at,"
                + " blob, txn_keys) values (?, ?, ?, now(), '\\x00', ?)")) {
      ps.setObject(1, pid);
      ps.setLong(2, base);
      ps.setInt(3, keys.length);
      ps.setArray(4, c.createArrayOf("bigint", Arrays.stream(keys).boxed().toArray()));
      ps.execute();
    }
  }

  private static long key(Connection c, UUID pid, String transactionId) throws Exception {
    try (PreparedStatement ps = c.prepareStatement("select queen.txn_key(?, ?)")) {
      ps.setObject(1, pid);
      ps.setString(2, transactionId);
      try (ResultSet rs = ps.executeQuery()) {
        rs.next();
        return rs.getLong(1);
      }
    }
  }

  private static List<Long> find(Connection c, UUID pid, long key, long retained) throws Exception {
    List<Long> out = new ArrayList<>();
    try (PreparedStatement ps =
        c.prepareStatement("select * from queen.log_txn_offsets_v1(?, ?, ?)")) {
      ps.setObject(1, pid);
      ps.setLong(2, key);
      ps.setLong(3, retained);
      try (ResultSet rs = ps.executeQuery()) {
        while (rs.next()) {
          out.add(rs.getLong(1));
        }
      }
    }
    return out;
  }

  /** The dedup check of a push of one message with this key, the known collisions given. */
  private static boolean seen(Connection c, UUID pid, long key, long retained, List<Long> known)
      throws Exception {
    try (PreparedStatement ps = c.prepareStatement("select queen.log_txn_seen_v1(?, ?, ?, ?, ?)")) {
      ps.setArray(1, c.createArrayOf("uuid", new Object[] {pid}));
      ps.setArray(2, c.createArrayOf("bigint", new Object[] {key}));
      ps.setArray(3, c.createArrayOf("bigint", new Object[] {retained}));
      ps.setArray(4, c.createArrayOf("uuid", known.stream().map(k -> pid).toArray()));
      ps.setArray(5, c.createArrayOf("bigint", known.toArray()));
      try (ResultSet rs = ps.executeQuery()) {
        rs.next();
        return rs.getBoolean(1);
      }
    }
  }
}
