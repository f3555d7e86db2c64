package queen.server.ops;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.sql.Connection;
import java.sql.Statement;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import queen.server.TestBroker;
import queen.server.Wire;

/**
 * A seek back and a retention cycle at once: retention read the group's cursor as it was before the
 * seek committed, and deleted what the seek hands out again.
 */
class SeekDuringRetentionTest {
  @RegisterExtension static final TestBroker broker = new TestBroker();
  private final Wire wire = new Wire(broker);

  @Test
  void retentionPassesOverAQueueWhoseGroupSeekIsInFlight() throws Exception {
    wire.pushNumbered("replayed", "p", 0, 5);
    assertThat(
            Wire.numbers(
                wire.popPartition("replayed", "p", "consumerGroup=g&batch=10&autoAck=true").json()))
        .containsExactly(0, 1, 2, 3, 4);
    String partition =
        "(select p.id from queen.log_partitions p join queen.queues q on q.id = p.queue_id"
            + " where q.name = 'replayed')";
    try (Connection seek = broker.connect();
        Statement st = seek.createStatement()) {
      seek.setAutoCommit(false);
      st.execute("select * from queen.group_seek_v1('g', 'replayed', false, '2000-01-01')");
      // every message completed by the only group, as the cursor stood before the seek
      long deleted =
          broker.sqlLong(
              "select segments from queen.retention_delete_v2("
                  + partition
                  + ", null, null, now() + interval '1 hour', 100)");
      assertThat(deleted).as("passed over while the seek holds the queue's lock").isZero();
      seek.commit();
    }
    TestBroker.Reply replay =
        await()
            .atMost(Duration.ofSeconds(10))
            .until(
                () -> wire.popPartition("replayed", "p", "consumerGroup=g&batch=10&wait=false"),
                r -> r.status() == 200);
    assertThat(Wire.numbers(replay.json())).containsExactly(0, 1, 2, 3, 4);
  }
}
