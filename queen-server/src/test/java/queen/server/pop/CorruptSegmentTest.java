package queen.server.pop;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import queen.server.TestBroker;
import queen.server.Wire;

/**
 * A stored push that cannot be decoded (a flipped byte fails its checksum) fails the pops of its
 * partition with an answer that names it and the way past it, and no other partition's.
 */
class CorruptSegmentTest {
  @RegisterExtension static final TestBroker broker = new TestBroker();
  private final Wire wire = new Wire(broker);

  private void corrupt(String queue, String partition) {
    corrupt(queue, partition, 0);
  }

  /** Flips a byte of the partition's stored pushes from {@code fromOffset} on. */
  private void corrupt(String queue, String partition, long fromOffset) {
    broker.sql(
        "update queen.log_segments s set blob = overlay(s.blob placing '\\xff'::bytea from 4 for 1)"
            + " from queen.log_partitions p join queen.queues q on q.id = p.queue_id"
            + " where p.id = s.partition_id and p.name = '"
            + partition
            + "' and q.name = '"
            + queue
            + "' and s.base_offset >= "
            + fromOffset);
  }

  @Test
  void aPushThatCannotBeReadIsNamedAndLeavesOtherPartitionsAlone() {
    wire.pushNumbered("broken", "bad", 0, 5);
    wire.pushNumbered("broken", "good", 0, 5);
    corrupt("broken", "bad");

    TestBroker.Reply bad = wire.popPartition("broken", "bad", "batch=5");
    assertThat(bad.status()).isEqualTo(500);
    assertThat(bad.json().get("error").asText())
        .contains("offset 0 of partition bad", "of queue broken", "seeked past it");
    assertThat(Wire.numbers(wire.popPartition("broken", "good", "batch=5").json()))
        .containsExactly(0, 1, 2, 3, 4);
  }

  @Test
  void anAutoAckPopOfSeveralPartitionsAnswersTheReadableOnesItsCursorsPassed() {
    wire.pushNumbered("brokenauto", "bad", 0, 5);
    wire.pushNumbered("brokenauto", "good", 0, 5);
    corrupt("brokenauto", "bad");

    TestBroker.Reply popped =
        broker.get(
            "/api/v1/pop/queue/brokenauto?batch=10&partitions=2&autoAck=true&wait=true&timeout=5000");
    assertThat(popped.status()).as("not a 500 that lost the readable partition").isEqualTo(200);
    assertThat(Wire.numbers(popped.json())).containsExactly(0, 1, 2, 3, 4);
    assertThat(popped.json().get("messages"))
        .allSatisfy(m -> assertThat(m.get("partition").asText()).isEqualTo("good"));
  }

  @Test
  void aLeasedPopOfSeveralPartitionsAnswersTheReadableOnesAndTheUnreadableKeepsItsLease() {
    wire.pushNumbered("brokenlease", "bad", 0, 5);
    wire.pushNumbered("brokenlease", "good", 0, 5);
    corrupt("brokenlease", "bad");

    TestBroker.Reply popped =
        broker.get(
            "/api/v1/pop/queue/brokenlease?batch=10&partitions=2&consumerGroup=g&wait=true&timeout=5000");
    assertThat(popped.status()).isEqualTo(200);
    assertThat(Wire.numbers(popped.json())).containsExactly(0, 1, 2, 3, 4);
    assertThat(wire.ackAll(popped.json()))
        .allSatisfy(a -> assertThat(a.get("success").asBoolean()).isTrue());
    assertThat(wire.popPartition("brokenlease", "bad", "consumerGroup=g").status())
        .as("held by its lease: given back, it failed every pop of the group at once")
        .isEqualTo(204);
    assertThat(
            broker.sqlText(
                "select c.lease_expires_at > now() from queen.log_consumers c"
                    + " join queen.log_partitions p on p.id = c.partition_id"
                    + " where p.name = 'bad' and c.consumer_group = 'g'"))
        .isEqualTo("t");
  }

  @Test
  void anAutoAckPopAnswersThePartitionsMessagesBeforeAnUnreadablePush() {
    wire.pushNumbered("brokentail", "p", 0, 5);
    wire.pushNumbered("brokentail", "p", 5, 5);
    corrupt("brokentail", "p", 5);
    TestBroker.Reply popped =
        wire.popPartition("brokentail", "p", "batch=10&autoAck=true&wait=true&timeout=5000");
    assertThat(popped.status()).isEqualTo(200);
    assertThat(Wire.numbers(popped.json())).containsExactly(0, 1, 2, 3, 4);
  }

  @Test
  void aLeasedPopAnswersThePartitionsMessagesBeforeAnUnreadablePushAndHoldsTheRest() {
    wire.pushNumbered("brokenrest", "p", 0, 5);
    wire.pushNumbered("brokenrest", "p", 5, 5);
    corrupt("brokenrest", "p", 5);
    double registered = broker.metric("queen_ack_registry_partitions", "");
    TestBroker.Reply popped =
        wire.popPartition("brokenrest", "p", "batch=10&consumerGroup=g&wait=true&timeout=5000");
    assertThat(popped.status()).isEqualTo(200);
    assertThat(Wire.numbers(popped.json())).containsExactly(0, 1, 2, 3, 4);
    assertThat(broker.metric("queen_ack_registry_partitions", ""))
        .as("no whole-batch ack can settle a lease past what was answered: not registered for one")
        .isEqualTo(registered);
    String lease = popped.json().get("leaseId").asText();
    assertThat(
            broker
                .post("/api/v1/lease/" + lease + "/extend", "{\"seconds\":30}")
                .json()
                .get(0)
                .get("success")
                .asBoolean())
        .as("its extension finds the partition it holds (a lease registered without it did not)")
        .isTrue();
    assertThat(wire.ackAll(popped.json()))
        .allSatisfy(a -> assertThat(a.get("success").asBoolean()).isTrue());
    assertThat(broker.sqlText(Wire.cursorOf("brokenrest", "g", "committed"))).isEqualTo("4");
    assertThat(wire.popPartition("brokenrest", "p", "consumerGroup=g").status())
        .as("the unreadable push stays under the lease until it ends")
        .isEqualTo(204);
  }
}
