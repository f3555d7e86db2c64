package queen.server.store;

import static org.assertj.core.api.Assertions.assertThat;

import java.sql.Array;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.util.ArrayList;
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
 * The transactionId index's pages, driven straight through queen.log_txn_add_v1 with seeded random
 * hashes: whatever the batches, the pages tile the hash space, stay under their size, keep their
 * pairs newest first, lose nothing when they split, and forget what retention removed.
 */
class TxnIndexTest {
  @RegisterExtension static final TestBroker broker = new TestBroker();

  private final Wire wire = new Wire(broker);

  @Test
  void randomBatchesKeepEveryPairFindableAndThePagesWellFormed() throws Exception {
    for (int seed = 0; seed < 4; seed++) {
      Random r = new Random(seed);
      UUID pid = partition("idx-" + seed);
      Map<Long, List<Long>> inserted = new HashMap<>();
      long offset = 0;
      try (Connection c = broker.connect()) {
        for (int round = 0; round < 40; round++) {
          int n = 1 + r.nextInt(r.nextInt(10) == 0 ? 700 : 40);
          long[] hashes = new long[n];
          long[] offsets = new long[n];
          for (int i = 0; i < n; i++) {
            // a few hashes repeat: collisions must share a page
            hashes[i] = r.nextInt(20) == 0 && !inserted.isEmpty() ? any(inserted, r) : r.nextLong();
            offsets[i] = offset++;
            inserted.computeIfAbsent(hashes[i], k -> new ArrayList<>()).add(offsets[i]);
          }
          add(c, pid, hashes, offsets, 0);
        }
        assertWellFormed(c, pid, 0);
        for (Map.Entry<Long, List<Long>> e : inserted.entrySet()) {
          assertThat(find(c, pid, e.getKey(), 0))
              .as("seed %d hash %d", seed, e.getKey())
              .containsExactlyInAnyOrderElementsOf(e.getValue());
        }
        assertThat(pairs(c, pid))
            .as("seed %d: nothing lost, nothing twice", seed)
            .isEqualTo(offset);
      }
    }
  }

  @Test
  void pairsBelowTheWatermarkAreIgnoredAndDroppedWhenTheirPageIsRewritten() throws Exception {
    UUID pid = partition("idx-retained");
    Random r = new Random(99);
    try (Connection c = broker.connect()) {
      long[] old = new long[500];
      long[] oldOffsets = new long[500];
      for (int i = 0; i < old.length; i++) {
        old[i] = r.nextLong();
        oldOffsets[i] = i;
      }
      add(c, pid, old, oldOffsets, 0);
      assertThat(find(c, pid, old[10], 400)).as("deleted by retention").isEmpty();
      assertThat(find(c, pid, old[450], 400)).containsExactly(450L);

      long[] fresh = new long[2000];
      long[] freshOffsets = new long[2000];
      for (int i = 0; i < fresh.length; i++) {
        fresh[i] = r.nextLong();
        freshOffsets[i] = 500 + i;
      }
      add(c, pid, fresh, freshOffsets, 400);
      assertWellFormed(c, pid, 0);
      assertThat(pairs(c, pid))
          .as("every page received new pairs and dropped its dead ones")
          .isEqualTo(100 + 2000);
    }
  }

  private static long any(Map<Long, List<Long>> inserted, Random r) {
    List<Long> keys = new ArrayList<>(inserted.keySet());
    return keys.get(r.nextInt(keys.size()));
  }

  private UUID partition(String queue) {
    wire.pushNumbered(queue, "p", 0, 1);
    broker.sql(
        "delete from queen.log_txn_index where partition_id = (select p.id from"
            + " queen.log_partitions p join queen.queues q on q.id = p.queue_id where q.name = '"
            + queue
            + "')");
    return UUID.fromString(
        broker.sqlText(
            "select p.id::text from queen.log_partitions p join queen.queues q on q.id ="
                + " p.queue_id where q.name = '"
                + queue
                + "'"));
  }

  /** Adds the pairs to the partition whose retention watermark is {@code retained}. */
  private static void add(Connection c, UUID pid, long[] hashes, long[] offsets, long retained)
      throws Exception {
    UUID[] pids = new UUID[hashes.length];
    java.util.Arrays.fill(pids, pid);
    long[] watermarks = new long[hashes.length];
    java.util.Arrays.fill(watermarks, retained);
    try (PreparedStatement ps = c.prepareStatement("select queen.log_txn_add_v1(?, ?, ?, ?)")) {
      ps.setArray(1, c.createArrayOf("uuid", pids));
      ps.setArray(2, c.createArrayOf("bigint", box(hashes)));
      ps.setArray(3, c.createArrayOf("bigint", box(offsets)));
      ps.setArray(4, c.createArrayOf("bigint", box(watermarks)));
      ps.execute();
    }
  }

  private static List<Long> find(Connection c, UUID pid, long hash, long retained)
      throws Exception {
    List<Long> out = new ArrayList<>();
    try (PreparedStatement ps =
        c.prepareStatement("select * from queen.log_txn_offsets_v1(?, ?, ?)")) {
      ps.setObject(1, pid);
      ps.setLong(2, hash);
      ps.setLong(3, retained);
      try (ResultSet rs = ps.executeQuery()) {
        while (rs.next()) {
          out.add(rs.getLong(1));
        }
      }
    }
    return out;
  }

  private static long pairs(Connection c, UUID pid) throws Exception {
    try (PreparedStatement ps =
        c.prepareStatement(
            "select coalesce(sum(cardinality(entries) / 2), 0) from queen.log_txn_index"
                + " where partition_id = ?")) {
      ps.setObject(1, pid);
      try (ResultSet rs = ps.executeQuery()) {
        rs.next();
        return rs.getLong(1);
      }
    }
  }

  /**
   * Pages tile the hash space from its minimum; each page's pairs are in its range, newest first.
   */
  private static void assertWellFormed(Connection c, UUID pid, long retained) throws Exception {
    List<Long> los = new ArrayList<>();
    List<Long[]> entries = new ArrayList<>();
    try (PreparedStatement ps =
        c.prepareStatement(
            "select lo, entries from queen.log_txn_index where partition_id = ? order by lo")) {
      ps.setObject(1, pid);
      try (ResultSet rs = ps.executeQuery()) {
        while (rs.next()) {
          los.add(rs.getLong(1));
          Array a = rs.getArray(2);
          entries.add((Long[]) a.getArray());
        }
      }
    }
    assertThat(los.getFirst()).isEqualTo(Long.MIN_VALUE);
    for (int p = 0; p < los.size(); p++) {
      Long[] e = entries.get(p);
      assertThat(e.length % 2).isZero();
      assertThat(e.length / 2).as("page %d size", p).isBetween(1, 112);
      long previous = Long.MAX_VALUE;
      for (int i = 0; i < e.length; i += 2) {
        long h = e[i];
        assertThat(h).as("page %d holds only its range", p).isGreaterThanOrEqualTo(los.get(p));
        if (p + 1 < los.size()) {
          assertThat(h).isLessThan(los.get(p + 1));
        }
        assertThat(e[i + 1])
            .as("newest first")
            .isLessThan(previous)
            .isGreaterThanOrEqualTo(retained);
        previous = e[i + 1];
      }
    }
  }

  private static Long[] box(long[] values) {
    Long[] out = new Long[values.length];
    for (int i = 0; i < values.length; i++) {
      out[i] = values[i];
    }
    return out;
  }
}
