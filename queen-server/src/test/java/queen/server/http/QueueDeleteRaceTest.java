package queen.server.http;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import java.sql.Connection;
import java.sql.Statement;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import queen.server.TestBroker;
import queen.server.Wire;

/**
 * A queue delete holds the queue's partitions for update, then deletes their cursors. An ack that
 * dead-letters holds a cursor, then needs its partition for the dead letter's foreign key: it no
 * longer waits there (a cycle that PostgreSQL's deadlock check could end by failing the delete), it
 * fails at once with a 503 to retry, and loses nothing.
 */
class QueueDeleteRaceTest {
  @RegisterExtension static final TestBroker broker = new TestBroker();
  private final Wire wire = new Wire(broker);

  @Test
  void aDeadLetteringAckMeetingADeleteFailsAtOnceAndItsRetryLosesNothing() throws Exception {
    wire.pushNumbered("doomed", "a", 0, 1);
    JsonNode popped = wire.popPartition("doomed", "a", "consumerGroup=g").json();
    try (Connection delete = broker.connect();
        Statement st = delete.createStatement()) {
      // a queue delete's first step (queue_delete_v1), its cursor deletes yet to come
      delete.setAutoCommit(false);
      st.execute(
          "select 1 from queen.log_partitions p join queen.queues q on q.id = p.queue_id"
              + " where q.name = 'doomed' for update");
      CompletableFuture<TestBroker.Reply> ack =
          CompletableFuture.supplyAsync(
              () -> broker.post("/api/v1/ack/batch", Wire.acks(popped, "dlq", "poison")));
      TestBroker.Reply reply = ack.get(10, TimeUnit.SECONDS); // the old ack waited here
      assertThat(reply.status()).isEqualTo(503);
      assertThat(reply.json().path("error").asText()).startsWith("Conflict with concurrent work");
      // the delete's next step finds the cursor free
      st.execute(
          "delete from queen.log_consumers c using queen.log_partitions p"
              + " where p.id = c.partition_id and c.consumer_group = 'g'");
      delete.rollback(); // a delete that did not go through after all
    }
    JsonNode again = broker.post("/api/v1/ack/batch", Wire.acks(popped, "dlq", "poison")).json();
    assertThat(again.get(0).get("success").asBoolean()).as("the retry passes").isTrue();
    assertThat(broker.get("/api/v1/dlq?queue=doomed").json().get("total").asInt())
        .as("dead-lettered once, by the retry")
        .isEqualTo(1);
  }

  @Test
  void aDeadLetteringAckDuringAClearPassesWithoutWaiting() throws Exception {
    wire.pushNumbered("cleared", "a", 0, 1);
    JsonNode popped = wire.popPartition("cleared", "a", "consumerGroup=g").json();
    try (Connection clear = broker.connect();
        Statement st = clear.createStatement()) {
      // a clear of the queue under way: its partitions locked, its transaction open
      clear.setAutoCommit(false);
      st.execute("select * from queen.queue_clear_v1('cleared', null)");
      TestBroker.Reply reply =
          CompletableFuture.supplyAsync(
                  () -> broker.post("/api/v1/ack/batch", Wire.acks(popped, "dlq", "poison")))
              .get(10, TimeUnit.SECONDS);
      assertThat(reply.status()).as("a clear changes no key: the ack need not wait").isEqualTo(200);
      clear.commit();
    }
    assertThat(broker.get("/api/v1/dlq?queue=cleared").json().get("total").asInt()).isEqualTo(1);
  }
}
