package queen.server.store;

import static org.assertj.core.api.Assertions.assertThat;
import static queen.server.Wire.object;
import static queen.server.store.PopSql.exec;
import static queen.server.store.PopSql.instant;
import static queen.server.store.PopSql.partitionId;
import static queen.server.store.PopSql.pop;
import static queen.server.store.PopSql.scalar;
import static queen.server.store.PopSql.taken;
import static queen.server.store.PopSql.verdict;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.time.Instant;
import java.util.List;
import java.util.UUID;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import queen.server.TestBroker;
import queen.server.Wire;

/** The rules of queen.log_pop_v1, called directly with the clock as a parameter. */
class PopEngineTest {
  @RegisterExtension static final TestBroker broker = new TestBroker();
  private final Wire wire = new Wire(broker);

  @Test
  void windowBufferHoldsThePartitionUntilWSecondsAfterItsNewestSegment() throws Exception {
    wire.configure("window", object().put("windowBuffer", 5));
    wire.pushNumbered("window", "p", 0, 3);
    try (Connection c = broker.connect()) {
      UUID pid = partitionId(c, "window", "p");
      Instant newest = newestSegment(c, pid);

      List<PopSql.Row> early = pop(c, pid, 10, newest.plusSeconds(1));
      assertThat(verdict(early)).isEqualTo("deferred");
      assertThat(early.getFirst().retryAt()).isEqualTo(newest.plusSeconds(5));

      List<PopSql.Row> due = pop(c, pid, 10, newest.plusSeconds(5).plusMillis(1));
      assertThat(taken(due)).isEqualTo(3);
    }
  }

  @Test
  void theWindowDebounceCanBeBypassedForTheRevisitWheel() throws Exception {
    wire.configure("window-skip", object().put("windowBuffer", 5));
    wire.pushNumbered("window-skip", "p", 0, 2);
    try (Connection c = broker.connect()) {
      UUID pid = partitionId(c, "window-skip", "p");
      Instant newest = newestSegment(c, pid);
      List<PopSql.Row> rows =
          pop(
              c,
              pid,
              "__QUEUE_MODE__",
              UUID.randomUUID(),
              10,
              false,
              "all",
              null,
              true,
              newest.plusSeconds(1));
      assertThat(taken(rows)).isEqualTo(2);
    }
  }

  @Test
  void delayedProcessingShowsOnlySegmentsAtLeastDSecondsOldAndIsNeverBypassed() throws Exception {
    wire.configure("delayed", object().put("delayedProcessing", 10));
    wire.pushNumbered("delayed", "p", 0, 2);
    wire.pushNumbered("delayed", "p", 2, 2);
    try (Connection c = broker.connect()) {
      UUID pid = partitionId(c, "delayed", "p");
      Instant first = segmentCreatedAt(c, pid, 0);
      Instant second = segmentCreatedAt(c, pid, 2);
      assertThat(second).isAfter(first);

      List<PopSql.Row> none = pop(c, pid, 10, first.plusSeconds(9));
      assertThat(verdict(none)).isEqualTo("deferred");
      assertThat(none.getFirst().retryAt()).isEqualTo(first.plusSeconds(10));

      Instant between = first.plusSeconds(10);
      List<PopSql.Row> one =
          pop(c, pid, "__QUEUE_MODE__", UUID.randomUUID(), 10, true, "all", null, true, between);
      assertThat(taken(one)).as("only the old segment, even with the window bypass").isEqualTo(2);

      List<PopSql.Row> rest = pop(c, pid, 10, between);
      assertThat(verdict(rest)).isEqualTo("deferred");
      assertThat(rest.getFirst().retryAt()).isEqualTo(second.plusSeconds(10));
    }
  }

  @Test
  void attemptCountIncrementsOnRedeliveryAndResetsToOneOnFreshWork() throws Exception {
    wire.pushNumbered("attempts", "p", 0, 4);
    try (Connection c = broker.connect()) {
      UUID pid = partitionId(c, "attempts", "p");
      Instant t0 = Instant.now();
      UUID w1 = UUID.randomUUID();
      List<PopSql.Row> first = pop(c, pid, "__QUEUE_MODE__", w1, 2, false, "all", null, false, t0);
      assertThat(first.getFirst().attempt()).isEqualTo(1);

      Instant expired = t0.plusSeconds(301);
      UUID w2 = UUID.randomUUID();
      List<PopSql.Row> again =
          pop(c, pid, "__QUEUE_MODE__", w2, 2, false, "all", null, false, expired);
      assertThat(taken(again)).isEqualTo(2);
      assertThat(again.getFirst().attempt()).as("redelivered from the same offset").isEqualTo(2);
      assertThat(cursor(c, pid, "retry_count")).as("lease expiry is free").isZero();

      ack(c, pid, List.of("attempts-p-0", "attempts-p-1"), w2, expired);
      assertThat(cursor(c, pid, "committed")).isEqualTo(1);

      List<PopSql.Row> fresh = pop(c, pid, 2, expired.plusSeconds(1));
      assertThat(fresh.getFirst().attempt()).as("fresh work").isEqualTo(1);
      assertThat(fresh.getFirst().baseOffset() + fresh.getFirst().startIdx()).isEqualTo(2);
    }
  }

  @Test
  void aPartitionWhoseSegmentsWereAllDeletedIsSealedAndStopsBeingACandidate() throws Exception {
    wire.pushNumbered("phantom", "gone", 0, 5);
    try (Connection c = broker.connect()) {
      UUID pid = partitionId(c, "phantom", "gone");
      exec(c, "delete from queen.log_segments where partition_id = '" + pid + "'");
      assertThat(hasPending(c, "phantom")).as("phantom pending before the seal").isTrue();

      assertThat(verdict(pop(c, pid, 10, null))).isEqualTo("empty");
      assertThat(cursor(c, pid, "committed")).isEqualTo(4);
      assertThat(cursor(c, pid, "(worker_id is null and attempt_count = 0)::int"))
          .as("a seal, not a claim")
          .isEqualTo(1);
      assertThat(hasPending(c, "phantom")).isFalse();
    }
    wire.pushNumbered("phantom", "gone", 5, 1);
    assertThat(Wire.numbers(wire.popPartition("phantom", "gone", "autoAck=true").json()))
        .as("a later push lands above the seal")
        .containsExactly(5);
  }

  @Test
  void aPartitionWhoseMessagesAreOnlyDelayedIsNotSealed() throws Exception {
    wire.configure("not-phantom", object().put("delayedProcessing", 3600));
    wire.pushNumbered("not-phantom", "p", 0, 5);
    try (Connection c = broker.connect()) {
      UUID pid = partitionId(c, "not-phantom", "p");
      assertThat(verdict(pop(c, pid, 10, null))).isEqualTo("deferred");
      assertThat(cursor(c, pid, "committed")).isEqualTo(-1);
    }
  }

  @Test
  void aCursorInARetentionGapResumesAtTheFirstRetainedSegment() throws Exception {
    wire.pushNumbered("gap", "p", 0, 10);
    wire.pushNumbered("gap", "p", 10, 10);
    try (Connection c = broker.connect()) {
      UUID pid = partitionId(c, "gap", "p");
      exec(
          c,
          "delete from queen.log_segments where partition_id = '" + pid + "' and base_offset = 0");
      List<PopSql.Row> rows = pop(c, pid, 5, null);
      assertThat(rows.getFirst().baseOffset() + rows.getFirst().startIdx()).isEqualTo(10);
      assertThat(taken(rows)).isEqualTo(5);
    }
  }

  @Test
  void aDeepBacklogCostsOnlyTheRowsDelivered() throws Exception {
    int segments = 2_000;
    int perSegment = 50;
    appendSegments("deep", segments, perSegment);
    try (Connection c = broker.connect()) {
      UUID pid = partitionId(c, "deep", "p");
      assertThat(scalar(c, "select last_offset from queen.log_partitions where id = '" + pid + "'"))
          .isEqualTo(segments * perSegment - 1L);

      long atHead = segmentRowsReadByOnePop(c, pid, 250);
      exec(
          c,
          "update queen.log_consumers set committed = 50049, worker_id = null"
              + " where partition_id = '"
              + pid
              + "'");
      long deep = segmentRowsReadByOnePop(c, pid, 250);

      // 250 messages are 5 segments of 50: the head probe, the segments in the budget's offset
      // range, and one blob read per delivered segment; nothing of the 2,000 segments behind
      assertThat(atHead).isLessThanOrEqualTo(11);
      assertThat(deep).isLessThanOrEqualTo(11);
    }
  }

  @Test
  void seekingATimestampProbesLogarithmicallyManySegments() throws Exception {
    appendSegments("seek", 2_000, 5);
    try (Connection c = broker.connect()) {
      UUID pid = partitionId(c, "seek", "p");
      // segment at base b was created at epoch + b ms
      exec(
          c,
          "update queen.log_segments set created_at = 'epoch'::timestamptz"
              + " + base_offset * interval '1 millisecond' where partition_id = '"
              + pid
              + "'");
      exec(
          c,
          "update queen.log_partitions set newest_created_at = 'epoch'::timestamptz"
              + " + 9995 * interval '1 millisecond' where id = '"
              + pid
              + "'");
      c.setAutoCommit(false);
      long before = segmentTuplesRead(c);
      long exact = seek(c, pid, 5000);
      long between = seek(c, pid, 5002);
      long past = seek(c, pid, 20_000);
      long read = segmentTuplesRead(c) - before;
      c.rollback();
      assertThat(exact).isEqualTo(4999);
      assertThat(between).as("first segment at or after the time starts at 5005").isEqualTo(5004);
      assertThat(past).as("nothing that recent: future only").isEqualTo(9999);
      assertThat(read).as("binary searches, not walks of 2,000 segments").isLessThan(100);
    }
  }

  private static long seek(Connection c, UUID pid, long millis) throws Exception {
    return scalar(
        c,
        "select queen.log_seek_v1('"
            + pid
            + "', 'epoch'::timestamptz + "
            + millis
            + " * interval '1 millisecond', 9999)");
  }

  @Test
  void hasPendingIsFalseOnlyWhenNothingIsTakeable() throws Exception {
    try (Connection c = broker.connect()) {
      assertThat(hasPending(c, "no-such-queue")).isFalse();
      wire.pushNumbered("probe", "p", 0, 2);
      assertThat(hasPending(c, "probe")).isTrue();
      UUID pid = partitionId(c, "probe", "p");
      Instant now = Instant.now();
      assertThat(taken(pop(c, pid, 10, now))).isEqualTo(2);
      assertThat(hasPending(c, "probe")).as("leased by another consumer").isFalse();
    }
  }

  private void appendSegments(String queue, int segments, int perSegment) throws Exception {
    wire.pushNumbered(queue, "p", 0, perSegment);
    try (Database db = Database.open(broker.db());
        Connection c = broker.connect()) {
      UUID pid = partitionId(c, queue, "p");
      List<SegmentWrite> writes = new java.util.ArrayList<>();
      for (int s = 1; s < segments; s++) {
        List<queen.server.codec.Frame> frames = new java.util.ArrayList<>();
        for (int i = 0; i < perSegment; i++) {
          frames.add(
              new queen.server.codec.Frame("seg-" + s + "-" + i, null, null, 0, "{}".getBytes()));
        }
        writes.add(SegmentWrite.of(pid, frames));
      }
      new PushStore(db).append(writes);
    }
  }

  private static long segmentRowsReadByOnePop(Connection c, UUID pid, int budget) throws Exception {
    c.setAutoCommit(false);
    try {
      long before = segmentTuplesRead(c);
      assertThat(taken(pop(c, pid, budget, null))).isEqualTo(budget);
      return segmentTuplesRead(c) - before;
    } finally {
      c.rollback();
      c.setAutoCommit(true);
    }
  }

  /** Rows of log_segments this transaction has read, by index or by sequential scan. */
  private static long segmentTuplesRead(Connection c) throws Exception {
    return scalar(
        c,
        "select coalesce(idx_tup_fetch, 0) + coalesce(seq_tup_read, 0)"
            + " from pg_stat_xact_user_tables where schemaname = 'queen' and relname = 'log_segments'");
  }

  private static boolean hasPending(Connection c, String queue) throws Exception {
    return scalar(c, "select queen.log_has_pending_v1('" + queue + "', '__QUEUE_MODE__')::int")
        == 1;
  }

  private static Instant newestSegment(Connection c, UUID pid) throws Exception {
    return instant(
        c,
        "select created_at from queen.log_segments where partition_id = '"
            + pid
            + "' order by base_offset desc limit 1");
  }

  private static Instant segmentCreatedAt(Connection c, UUID pid, long base) throws Exception {
    return instant(
        c,
        "select created_at from queen.log_segments where partition_id = '"
            + pid
            + "' and base_offset = "
            + base);
  }

  private static long cursor(Connection c, UUID pid, String column) throws Exception {
    return scalar(
        c,
        "select "
            + column
            + " from queen.log_consumers where partition_id = '"
            + pid
            + "' and consumer_group = '__QUEUE_MODE__'");
  }

  private static void ack(Connection c, UUID pid, List<String> txns, UUID lease, Instant now)
      throws Exception {
    try (PreparedStatement ps =
        c.prepareStatement(
            "select * from queen.log_ack_v1('__QUEUE_MODE__', ?, ?, ?, ?, false, ?)")) {
      int n = txns.size();
      ps.setArray(1, c.createArrayOf("uuid", java.util.Collections.nCopies(n, pid).toArray()));
      ps.setArray(2, c.createArrayOf("text", txns.toArray()));
      ps.setArray(3, c.createArrayOf("uuid", java.util.Collections.nCopies(n, lease).toArray()));
      ps.setArray(
          4, c.createArrayOf("text", java.util.Collections.nCopies(n, "completed").toArray()));
      Sql.setTimestamptz(ps, 5, now);
      try (ResultSet rs = ps.executeQuery()) {
        while (rs.next()) {
          assertThat(rs.getBoolean("success")).as(rs.getString("error")).isTrue();
        }
      }
    }
  }
}
