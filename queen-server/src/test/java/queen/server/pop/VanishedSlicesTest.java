package queen.server.pop;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import queen.server.TestBroker;
import queen.server.Wire;

/**
 * Retention or a clear that commits between a pop's plan and its read of the blobs (each statement
 * of the pop reads anew): the pop delivers nothing, and takes no lease over nothing.
 */
class VanishedSlicesTest {
  @RegisterExtension static final TestBroker broker = new TestBroker();

  private final Wire wire = new Wire(broker);

  @Test
  void aPopWhoseSlicesWereDeletedUnderItLeavesThePartitionFree() {
    wire.pushNumbered("vanish", "p", 0, 5);
    // where the pop takes its lease, after its plan and before its reads: as a clear of 0-4 there
    broker.sql(
        "create or replace function queen.pop_commit_lease_v1() returns void language sql as $$"
            + " delete from queen.log_segments s using queen.log_partitions p, queen.queues q"
            + " where s.partition_id = p.id and p.queue_id = q.id and q.name = 'vanish'"
            + " and s.base_offset < 5 $$");
    assertThat(wire.popPartition("vanish", "p", "batch=10&consumerGroup=g").status())
        .isEqualTo(204);

    wire.pushNumbered("vanish", "p", 5, 5);
    TestBroker.Reply next = wire.popPartition("vanish", "p", "batch=10&consumerGroup=g");
    assertThat(next.status())
        .as("not held by a lease over nothing until it expires")
        .isEqualTo(200);
    assertThat(Wire.numbers(next.json())).containsExactly(5, 6, 7, 8, 9);
    assertThat(wire.ackAll(next.json()).get(0).get("success").asBoolean()).isTrue();
  }
}
