package queen.server.http;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.List;
import java.util.UUID;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import queen.server.TestBroker;
import queen.server.Wire;

/**
 * {@code DELETE /api/v1/messages/:partitionId/:transactionId}: the message is never delivered
 * again, to any group, and the other messages keep their offsets.
 */
class MessageDeleteTest {
  @RegisterExtension static final TestBroker broker = new TestBroker();
  private final Wire wire = new Wire(broker);

  private String partitionId(String queue) {
    return broker.sqlText(
        "select p.id::text from queen.log_partitions p join queen.queues q on q.id = p.queue_id"
            + " where q.name = '"
            + queue
            + "' and p.name = 'p'");
  }

  private TestBroker.Reply delete(String queue, String txn) {
    return broker.delete("/api/v1/messages/" + partitionId(queue) + "/" + txn);
  }

  @Test
  void aDeletedMessageIsSkippedByEveryGroupAndTheOthersKeepTheirOffsets() {
    wire.pushNumbered("del", "p", 0, 5);
    JsonNode ok = delete("del", "del-p-1").json();
    assertThat(ok.get("success").asBoolean()).isTrue();
    assertThat(ok.get("message").asText()).isEqualTo("Message deleted successfully");

    for (String group : new String[] {"a", "b"}) {
      JsonNode popped =
          wire.popPartition("del", "p", "consumerGroup=" + group + "&batch=10").json();
      assertThat(Wire.numbers(popped)).as(group).containsExactly(0, 2, 3, 4);
      assertThat(wire.ackAll(popped))
          .allSatisfy(a -> assertThat(a.get("success").asBoolean()).isTrue());
    }
    JsonNode queueMode = wire.popPartition("del", "p", "batch=10&autoAck=true").json();
    assertThat(Wire.numbers(queueMode)).containsExactly(0, 2, 3, 4);

    wire.pushNumbered("del", "p", 5, 1);
    assertThat(Wire.numbers(wire.popPartition("del", "p", "consumerGroup=a").json()))
        .as("the cursor passed the deleted one")
        .containsExactly(5);
    JsonNode page = broker.get("/api/v1/messages?queue=del&limit=3&offset=3").json();
    assertThat(page.get("messages")).as("offsets 2 and 0, newest first").hasSize(2);
    assertThat(page.get("rows").asInt())
        .as("a page short of the deleted message is not the last: the next starts 3 on")
        .isEqualTo(3);
    assertThat(delete("del", "del-p-1").status()).as("already deleted").isEqualTo(404);
    assertThat(broker.get("/api/v1/messages/" + partitionId("del") + "/del-p-1").status())
        .isEqualTo(404);
    JsonNode repush =
        broker
            .post(
                "/api/v1/push",
                Wire.items(List.of(Wire.item("del", "p", "del-p-1", Wire.object().put("n", 1)))))
            .json();
    assertThat(repush.get(0).get("status").asText())
        .as("its transactionId still deduplicates")
        .isEqualTo("duplicate");
  }

  @Test
  void partialAcksPassADeletedMessageInsideTheLease() {
    wire.pushNumbered("delpart", "p", 0, 4);
    delete("delpart", "delpart-p-1");
    JsonNode popped = wire.popPartition("delpart", "p", "consumerGroup=g&batch=10").json();
    assertThat(Wire.numbers(popped)).containsExactly(0, 2, 3);
    for (JsonNode m : popped.get("messages")) {
      ObjectNode body = Wire.ack(m, "completed", null);
      body.put("consumerGroup", "g");
      assertThat(broker.post("/api/v1/ack", body).json().get(0).get("success").asBoolean())
          .isTrue();
    }
    assertThat(
            broker.sqlLong(
                "select committed from queen.log_consumers where consumer_group = 'g'"
                    + " and partition_id = '"
                    + partitionId("delpart")
                    + "'"))
        .as("the cursor went over the deleted offset")
        .isEqualTo(3);
  }

  @Test
  void aMessageDeletedUnderALeaseAndThenDeadLetteredLeavesNoDeadLetter() {
    wire.pushNumbered("deldlq", "p", 0, 2);
    JsonNode popped = wire.popPartition("deldlq", "p", "batch=2").json();
    delete("deldlq", "deldlq-p-0");
    for (JsonNode a : wire.ackAll(popped, "dlq", "poison")) {
      assertThat(a.get("success").asBoolean()).as(a.toString()).isTrue();
    }
    // its empty placeholder, dead-lettered, made the page invalid JSON ("data":,)
    TestBroker.Reply page = broker.get("/api/v1/dlq?queue=deldlq");
    assertThat(page.status()).isEqualTo(200);
    assertThat(page.json().get("messages"))
        .extracting(m -> m.get("transactionId").asText())
        .containsExactly("deldlq-p-1");
  }

  @Test
  void aLeaseOfOnlyDeletedMessagesDeliversNothingAndMovesOn() {
    wire.pushNumbered("delall", "p", 0, 2);
    delete("delall", "delall-p-0");
    delete("delall", "delall-p-1");
    assertThat(wire.popPartition("delall", "p", "consumerGroup=g&batch=10").status())
        .isEqualTo(204);
    wire.pushNumbered("delall", "p", 2, 1);
    assertThat(Wire.numbers(wire.popPartition("delall", "p", "consumerGroup=g").json()))
        .containsExactly(2);
  }

  @Test
  void aMessageMovedToTheDeadLettersGoesThereForEveryGroupStillBeforeItAndCanBeRequeued() {
    wire.pushNumbered("mvdlq", "p", 0, 3);
    JsonNode first = wire.popPartition("mvdlq", "p", "consumerGroup=done&batch=10").json();
    wire.ackAll(first);
    assertThat(wire.popPartition("mvdlq", "p", "consumerGroup=late&batch=1").status())
        .isEqualTo(200);

    JsonNode moved =
        broker
            .post("/api/v1/messages/" + partitionId("mvdlq") + "/mvdlq-p-1/dlq", Wire.object())
            .json();
    assertThat(moved.get("success").asBoolean()).isTrue();
    assertThat(moved.get("consumerGroups").toString())
        .as("only the group whose cursor had not passed it")
        .isEqualTo("[\"late\"]");
    JsonNode dlq = broker.get("/api/v1/dlq?queue=mvdlq").json();
    assertThat(dlq.get("messages")).hasSize(1);
    assertThat(dlq.get("messages").get(0).get("transactionId").asText()).isEqualTo("mvdlq-p-1");
    assertThat(dlq.get("messages").get(0).get("data").get("n").asInt()).isEqualTo(1);
    assertThat(Wire.numbers(wire.popPartition("mvdlq", "p", "consumerGroup=fresh&batch=10").json()))
        .as("no group receives it from the log any more")
        .containsExactly(0, 2);
    assertThat(
            broker
                .post("/api/v1/messages/" + partitionId("mvdlq") + "/mvdlq-p-1/dlq", Wire.object())
                .status())
        .as("a second move finds nothing")
        .isEqualTo(404);
  }

  @Test
  void aMessageEveryGroupConsumedOnlyLeavesTheLogWhenMovedToTheDeadLetters() {
    wire.pushNumbered("mvdone", "p", 0, 2);
    wire.ackAll(wire.popPartition("mvdone", "p", "consumerGroup=done&batch=10").json());
    TestBroker.Reply moved =
        broker.post("/api/v1/messages/" + partitionId("mvdone") + "/mvdone-p-1/dlq", Wire.object());
    assertThat(moved.status()).isEqualTo(200);
    assertThat(moved.json().get("consumerGroups").toString())
        .as("no group is behind it: no queue-mode dead letter for a consumer that read nothing")
        .isEqualTo("[]");
    assertThat(broker.get("/api/v1/dlq?queue=mvdone").json().get("total").asInt()).isZero();
    assertThat(
            Wire.numbers(wire.popPartition("mvdone", "p", "consumerGroup=fresh&batch=10").json()))
        .containsExactly(0);
  }

  @Test
  void aMessageMovedToTheDeadLettersGoesAlsoToAGroupSubscribedWithoutACursorThere() {
    wire.pushNumbered("mvsub", "other", 0, 1);
    // early subscribes (mode all) by popping another partition: it has no cursor on p yet
    assertThat(wire.popPartition("mvsub", "other", "consumerGroup=early").status()).isEqualTo(200);
    wire.pushNumbered("mvsub", "p", 0, 2);
    JsonNode moved =
        broker
            .post("/api/v1/messages/" + partitionId("mvsub") + "/mvsub-p-0/dlq", Wire.object())
            .json();
    assertThat(moved.get("consumerGroups").toString())
        .as("early would have read it from p")
        .isEqualTo("[\"early\"]");
    assertThat(Wire.numbers(wire.popPartition("mvsub", "p", "consumerGroup=early&batch=10").json()))
        .containsExactly(1);
  }

  @Test
  void unknownMessagesAreNotFound() {
    wire.pushNumbered("delbad", "p", 0, 1);
    assertThat(delete("delbad", "never").status()).isEqualTo(404);
    assertThat(broker.delete("/api/v1/messages/" + UUID.randomUUID() + "/x").status())
        .isEqualTo(404);
    assertThat(broker.delete("/api/v1/messages/nope/x").status()).isEqualTo(400);
  }
}
