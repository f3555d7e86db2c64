package queen.server.store;

import static org.assertj.core.api.Assertions.assertThat;
import static queen.server.Wire.object;
import static queen.server.store.PopSql.exec;
import static queen.server.store.PopSql.instant;
import static queen.server.store.PopSql.partitionId;
import static queen.server.store.PopSql.pop;
import static queen.server.store.PopSql.scalar;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import queen.server.TestBroker;
import queen.server.Wire;

/** The candidate paths around log_pop_v1: the hot-list batch call and the SQL wildcard scan. */
class CandidatePathTest {
  @RegisterExtension static final TestBroker broker = new TestBroker();
  private final Wire wire = new Wire(broker);

  @Test
  void theListCallReturnsAVerdictPerCandidateTried() throws Exception {
    wire.configure("verdicts", object().put("delayedProcessing", 3600));
    wire.configure("verdicts-open", object());
    wire.pushNumbered("verdicts-open", "full", 0, 3);
    wire.pushNumbered("verdicts-open", "leased", 0, 3);
    wire.pushNumbered("verdicts-open", "drained", 0, 1);
    wire.pushNumbered("verdicts", "later", 0, 1);
    try (Connection c = broker.connect()) {
      pop(c, partitionId(c, "verdicts-open", "leased"), 10, null);
      pop(
          c,
          partitionId(c, "verdicts-open", "drained"),
          "__QUEUE_MODE__",
          UUID.randomUUID(),
          10,
          true,
          "all",
          null,
          false,
          null);

      Map<String, String> v =
          verdicts(c, "verdicts-open", List.of("drained", "leased", "nope", "full"), 10, 5);
      assertThat(v)
          .containsExactly(
              Map.entry("drained", "empty"),
              Map.entry("leased", "locked"),
              Map.entry("nope", "missing"),
              Map.entry("full", "delivered"));
      assertThat(verdicts(c, "verdicts", List.of("later"), 10, 1))
          .containsExactly(Map.entry("later", "deferred"));
    }
  }

  @Test
  void theListCallStopsOnceEnoughPartitionsWereClaimedOrTheBudgetIsSpent() throws Exception {
    for (String p : List.of("a", "b", "c", "d")) {
      wire.pushNumbered("stops", p, 0, 5);
    }
    try (Connection c = broker.connect()) {
      assertThat(verdicts(c, "stops", List.of("a", "b", "c", "d"), 100, 2).keySet())
          .as("two partitions wanted")
          .containsExactly("a", "b");
      assertThat(verdicts(c, "stops", List.of("c", "d"), 5, 4).keySet())
          .as("the budget is spent by the first")
          .containsExactly("c");
    }
  }

  @Test
  void theWatermarkKeepsItsFloorWhileALeaseHoldsTheBacklog() throws Exception {
    wire.pushNumbered("floor", "p", 0, 2);
    try (Connection c = broker.connect()) {
      Instant t0 = dbNow(c);
      UUID pid = partitionId(c, "floor", "p");
      pop(c, pid, "g", UUID.randomUUID(), 10, false, "all", null, false, t0);
      assertThat(wildcard(c, "floor", "g", t0.plusSeconds(1))).isZero();
      assertThat(watermark(c, "floor", "g", "watermark = '-infinity'")).isTrue();
      assertThat(watermark(c, "floor", "g", "checked_at = '" + t0.plusSeconds(1) + "'")).isTrue();

      // the lease expires: the backlog is found again, because the floor was kept
      assertThat(wildcard(c, "floor", "g", t0.plusSeconds(400))).isEqualTo(2);
    }
  }

  @Test
  void theWatermarkAdvancesOnlyWhenTheQueueIsGenuinelyEmptyAndAtMostEvery30Seconds()
      throws Exception {
    wire.pushNumbered("advance", "p", 0, 1);
    try (Connection c = broker.connect()) {
      Instant t0 = dbNow(c);
      assertThat(wildcard(c, "advance", "__QUEUE_MODE__", t0, true)).isEqualTo(1);
      assertThat(wildcard(c, "advance", "__QUEUE_MODE__", t0.plusSeconds(1))).isZero();
      assertThat(
              watermark(c, "advance", "__QUEUE_MODE__", "watermark = '" + t0.plusSeconds(1) + "'"))
          .isTrue();
      assertThat(wildcard(c, "advance", "__QUEUE_MODE__", t0.plusSeconds(10))).isZero();
      assertThat(
              watermark(c, "advance", "__QUEUE_MODE__", "checked_at = '" + t0.plusSeconds(1) + "'"))
          .as("no re-check within 30 s")
          .isTrue();
      assertThat(wildcard(c, "advance", "__QUEUE_MODE__", t0.plusSeconds(32))).isZero();
      assertThat(
              watermark(
                  c, "advance", "__QUEUE_MODE__", "checked_at = '" + t0.plusSeconds(32) + "'"))
          .isTrue();
    }
  }

  @Test
  void partitionsNotWrittenSinceTheWatermarkAreNotScannedUntilTheyAreWrittenAgain()
      throws Exception {
    wire.pushNumbered("stale", "p", 0, 1);
    try (Connection c = broker.connect()) {
      Instant t0 = dbNow(c);
      UUID pid = partitionId(c, "stale", "p");
      // a watermark far past the partition's last write, as if it was set hours later
      exec(
          c,
          "insert into queen.log_scan_watermarks select id, '__QUEUE_MODE__', '"
              + t0.plusSeconds(3600)
              + "', '"
              + t0.plusSeconds(3600)
              + "' from queen.queues where name = 'stale'");
      assertThat(wildcard(c, "stale", "__QUEUE_MODE__", t0.plusSeconds(3601))).isZero();
      exec(
          c,
          "update queen.log_partitions set last_write_at = '"
              + t0.plusSeconds(3601)
              + "' where id = '"
              + pid
              + "'");
      assertThat(wildcard(c, "stale", "__QUEUE_MODE__", t0.plusSeconds(3602))).isEqualTo(1);
    }
  }

  private static Map<String, String> verdicts(
      Connection c, String queue, List<String> names, int batch, int partitions) throws Exception {
    try (PreparedStatement ps =
        c.prepareStatement(
            "select partition_name, verdict from queen.log_pop_list_v1(?, '__QUEUE_MODE__', ?, ?,"
                + " ?, ?, false)")) {
      ps.setString(1, queue);
      ps.setArray(2, c.createArrayOf("text", names.toArray()));
      ps.setObject(3, UUID.randomUUID());
      ps.setInt(4, batch);
      ps.setInt(5, partitions);
      Map<String, String> out = new LinkedHashMap<>();
      try (ResultSet rs = ps.executeQuery()) {
        while (rs.next()) {
          out.putIfAbsent(rs.getString(1), rs.getString(2));
        }
      }
      return out;
    }
  }

  private static int wildcard(Connection c, String queue, String group, Instant now)
      throws Exception {
    return wildcard(c, queue, group, now, false);
  }

  /** Messages delivered by one wildcard pop at the given time. */
  private static int wildcard(
      Connection c, String queue, String group, Instant now, boolean autoAck) throws Exception {
    try (PreparedStatement ps =
        c.prepareStatement(
            "select coalesce(sum(take), 0) from queen.log_pop_wildcard_v1(?, ?, ?, 100, 4, ?,"
                + " 'all', null, ?) where verdict = 'delivered'")) {
      ps.setString(1, queue);
      ps.setString(2, group);
      ps.setObject(3, UUID.randomUUID());
      ps.setBoolean(4, autoAck);
      Sql.setTimestamptz(ps, 5, now);
      try (ResultSet rs = ps.executeQuery()) {
        rs.next();
        return rs.getInt(1);
      }
    }
  }

  private static boolean watermark(Connection c, String queue, String group, String condition)
      throws Exception {
    return scalar(
            c,
            "select count(*) from queen.log_scan_watermarks w join queen.queues q on q.id ="
                + " w.queue_id where q.name = '"
                + queue
                + "' and w.consumer_group = '"
                + group
                + "' and "
                + condition)
        == 1;
  }

  private static Instant dbNow(Connection c) throws Exception {
    return instant(c, "select date_trunc('milliseconds', now())");
  }
}
