package queen.server.pop;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import queen.server.TestBroker;
import queen.server.Wire;

/**
 * A leased pop that fails after its claim committed gives its leases back: its client got nothing,
 * and the batch was kept from every consumer of the group for a lease time.
 */
class GiveBackTest {
  @RegisterExtension static final TestBroker broker = new TestBroker();
  private final Wire wire = new Wire(broker);

  private String partitionId(String queue, String partition) {
    return broker.sqlText(
        "select p.id::text from queen.log_partitions p join queen.queues q on q.id = p.queue_id"
            + " where q.name = '"
            + queue
            + "' and p.name = '"
            + partition
            + "'");
  }

  @Test
  void aPopWhoseAcksOfDeletedMessagesFailedLeavesItsBatchToTheNextPop() {
    wire.pushNumbered("giveback", "a", 0, 3);
    wire.pushNumbered("giveback", "b", 0, 2);
    assertThat(
            broker
                .delete("/api/v1/messages/" + partitionId("giveback", "a") + "/giveback-a-1")
                .status())
        .isEqualTo(200);
    // the acks of the deleted message, made under the pop's lease after its claim, fail
    String definition = broker.sqlText("select pg_get_functiondef('queen.log_ack_v1'::regproc)");
    broker.sql(
        "create or replace function queen.log_ack_v1("
            + broker.sqlText("select pg_get_function_arguments('queen.log_ack_v1'::regproc)")
            + ") returns "
            + broker.sqlText("select pg_get_function_result('queen.log_ack_v1'::regproc)")
            + " language plpgsql as $$ begin raise exception 'the acks failed'; end $$");
    TestBroker.Reply failed;
    try {
      failed =
          broker.get(
              "/api/v1/pop/queue/giveback?batch=10&partitions=2&consumerGroup=g&wait=true&timeout=5000");
    } finally {
      broker.sql(definition);
    }
    assertThat(failed.status()).isGreaterThanOrEqualTo(500);
    assertThat(
            broker.sqlLong(
                "select count(*) from queen.log_consumers c"
                    + " where c.consumer_group = 'g' and c.lease_expires_at > now()"))
        .as("no lease left over the batch nobody received")
        .isZero();

    TestBroker.Reply again =
        broker.get(
            "/api/v1/pop/queue/giveback?batch=10&partitions=2&consumerGroup=g"
                + "&wait=true&timeout=5000");
    assertThat(again.status()).isEqualTo(200);
    assertThat(Wire.numbers(again.json())).containsExactlyInAnyOrder(0, 2, 0, 1);
    assertThat(wire.ackAll(again.json()))
        .allSatisfy(a -> assertThat(a.get("success").asBoolean()).isTrue());
    assertThat(
            broker.sqlLong(
                "select sum(c.committed) from queen.log_consumers c where c.consumer_group = 'g'"))
        .as("both cursors at their partition's last message, the deleted one passed")
        .isEqualTo(3);
  }
}
