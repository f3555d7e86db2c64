package queen.server.store;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import queen.server.TestBroker;
import queen.server.Wire;
import queen.server.ops.Retention;

/**
 * A cursor's committed_at (V17) is the created_at of the message at its committed offset, however
 * the cursor got there: the completed message list trusts it as the date of the newest completed
 * message, and one dated too early would leave that partition's messages off the page.
 */
class CursorDatesTest {
  @RegisterExtension static final TestBroker broker = new TestBroker();
  private final Wire wire = new Wire(broker);

  /** Three pushes of two to the group's own queue: offsets 0-1, 2-3 and 4-5, each pair dated. */
  private void threeSegments(String group) {
    for (int base = 0; base < 6; base += 2) {
      wire.pushNumbered(group, "p", base, 2);
    }
  }

  @Test
  void anAutoAckedPopDatesTheCursorAtTheLastMessageItTook() {
    threeSegments("auto");
    assertThat(wire.popPartition("auto", "p", "batch=3&autoAck=true&consumerGroup=auto").status())
        .isEqualTo(200);
    assertDatedAt("auto", 2);
  }

  @Test
  void aWholeBatchAckedTogetherDatesTheCursorAtTheBatchEnd() {
    threeSegments("whole");
    wire.ackAll(wire.popPartition("whole", "p", "batch=3&consumerGroup=whole").json());
    assertDatedAt("whole", 2);
  }

  @Test
  void messagesAckedOneByOneDateTheCursorAtEachOfThem() {
    threeSegments("single");
    JsonNode leased = wire.popPartition("single", "p", "batch=5&consumerGroup=single").json();
    String lease = leased.get("messages").get(0).get("leaseId").asText();
    // the last one ends the lease, dated by the pop
    for (int i = 0; i < 5; i++) {
      assertThat(wire.ackOne(leased.get("messages").get(i), lease, "single").status())
          .isEqualTo(200);
      assertDatedAt("single", i);
    }
  }

  @Test
  void deadLetteringABatchDatesTheCursorPastIt() {
    threeSegments("dead");
    wire.ackAll(
        wire.popPartition("dead", "p", "batch=3&consumerGroup=dead").json(), "dlq", "poison");
    assertDatedAt("dead", 2);
  }

  @Test
  void aSeekToATimestampDatesTheCursorAtTheMessageBeforeIt() {
    threeSegments("seeker");
    wire.popPartition("seeker", "p", "batch=1&autoAck=true&consumerGroup=seeker");
    Instant third =
        broker.sqlInstant(
            "select s.created_at from queen.log_segments s join queen.log_partitions p on p.id ="
                + " s.partition_id join queen.queues q on q.id = p.queue_id"
                + " where q.name = 'seeker' and s.base_offset = 4");
    assertThat(
            broker
                .post(
                    "/api/v1/consumer-groups/seeker/queues/seeker/seek",
                    Wire.object().put("timestamp", third.toString()))
                .status())
        .isEqualTo(200);
    assertDatedAt("seeker", 3);
  }

  @Test
  void seeksToTheEndDateTheCursorAtTheNewestMessage() {
    threeSegments("ender");
    wire.popPartition("ender", "p", "batch=1&autoAck=true&consumerGroup=ender");
    assertThat(
            broker
                .post(
                    "/api/v1/consumer-groups/ender/queues/ender/seek",
                    Wire.object().put("toEnd", true))
                .status())
        .isEqualTo(200);
    assertDatedAt("ender", 5);
    wire.pushNumbered("ender", "p", 6, 1);
    assertThat(
            broker
                .post("/api/v1/consumer-groups/ender/queues/ender/partitions/p/seek", Wire.object())
                .status())
        .isEqualTo(200);
    assertDatedAt("ender", 6);
  }

  @Test
  void messagesExpiredIntoDeadLettersDateTheCursorPastThem() {
    threeSegments("waiter");
    wire.configure("waiter", Wire.object().put("maxWaitTimeSeconds", 60));
    wire.popPartition("waiter", "p", "batch=1&autoAck=true&consumerGroup=waiter");
    // retried: the broker's own sweep may hold the cursor for a moment (SKIP LOCKED)
    await()
        .until(
            () ->
                broker.sqlLong(
                        "select count(*) from queen.log_expire_waiting_v2(100, now() + interval"
                            + " '1 hour') e where e.consumer_group = 'waiter'")
                    > 0);
    assertDatedAt("waiter", 5);
  }

  // a cursor moved last before V17, or placed at first contact, has no date until the retention
  // cycle gives it one (a group that stopped consuming never moves it again); more of them than
  // one transaction of the cycle dates
  @Test
  void cursorsWithoutTheirDateAreAllDatedByTheRetentionCycle() {
    List<ObjectNode> items = new ArrayList<>();
    for (int i = 0; i < 150; i++) {
      items.add(Wire.item("undated", "p" + i, "undated-" + i, Wire.object().put("n", i)));
    }
    assertThat(broker.post("/api/v1/push", Wire.items(items)).status()).isEqualTo(201);
    assertThat(
            broker
                .post(
                    "/api/v1/consumer-groups/undated/queues/undated/seek",
                    Wire.object().put("toEnd", true))
                .status())
        .isEqualTo(200);
    broker.sql(
        "update queen.log_consumers set committed_at = null where consumer_group = 'undated'");
    try (Database db = Database.open(broker.db())) {
      new Retention(
              new RetentionStore(db),
              new Retention.Settings(
                  Duration.ofHours(1), 100, 16L << 20, Retention.Vacuum.OFF, Duration.ZERO),
              Instant::now,
              new SimpleMeterRegistry(),
              (q, n) -> {})
          .runOnce();
    }
    assertThat(
            broker.sqlLong(
                "select count(*) from queen.log_consumers c where c.consumer_group = 'undated'"
                    + " and c.committed_at = (select s.created_at from queen.log_segments s"
                    + " where s.partition_id = c.partition_id and s.base_offset = c.committed)"))
        .isEqualTo(150);
  }

  @Test
  void datingPassesOverACursorInUseWithoutWaitingForIt() throws Exception {
    List<ObjectNode> items = new ArrayList<>();
    for (int i = 0; i < 2; i++) {
      items.add(Wire.item("busy", "p" + i, "busy-" + i, Wire.object()));
    }
    assertThat(broker.post("/api/v1/push", Wire.items(items)).status()).isEqualTo(201);
    broker.post("/api/v1/consumer-groups/busy/queues/busy/seek", Wire.object().put("toEnd", true));
    broker.sql("update queen.log_consumers set committed_at = null where consumer_group = 'busy'");
    String p0 =
        "(select p.id from queen.log_partitions p join queen.queues q on q.id = p.queue_id"
            + " where q.name = 'busy' and p.name = 'p0')";
    try (java.sql.Connection holder = broker.connect();
        java.sql.Connection dater = broker.connect();
        java.sql.Statement hold = holder.createStatement();
        java.sql.Statement date = dater.createStatement()) {
      // an ack's statement holding p0's cursor, as a merged ack of two groups holds one of them
      holder.setAutoCommit(false);
      hold.execute(
          "select 1 from queen.log_consumers where consumer_group = 'busy' and partition_id = "
              + p0
              + " for no key update");
      date.execute("set lock_timeout = '2s'");
      date.execute("select * from queen.log_cursors_date_v1(null, null, 1000)");
      holder.rollback();
    }
    assertThat(
            broker.sqlLong(
                "select count(*) from queen.log_consumers where consumer_group = 'busy'"
                    + " and committed_at is not null and partition_id <> "
                    + p0))
        .as("the other cursor dated")
        .isEqualTo(1);
    assertThat(
            broker.sqlLong(
                "select count(*) from queen.log_consumers where consumer_group = 'busy'"
                    + " and committed_at is null and partition_id = "
                    + p0))
        .as("the cursor in use left for later")
        .isEqualTo(1);
  }

  /** The group's cursor on its queue sits at {@code committed}, dated by the segment holding it. */
  private void assertDatedAt(String group, long committed) {
    assertThat(broker.sqlLong(Wire.cursorOf(group, group, "c.committed"))).isEqualTo(committed);
    String dated =
        "c.committed_at = (select s.created_at from queen.log_segments s"
            + " where s.partition_id = c.partition_id and s.base_offset <= c.committed"
            + " and s.base_offset + s.msg_count > c.committed)";
    assertThat(broker.sqlText(Wire.cursorOf(group, group, dated)))
        .as("committed_at of %s", group)
        .isEqualTo("t");
  }
}
