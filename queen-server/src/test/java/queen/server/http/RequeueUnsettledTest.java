package queen.server.http;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import queen.server.TestBroker;
import queen.server.Wire;

/**
 * A dead letter written inside a leased batch is not settled: the batch given back or its lease
 * expired, it is taken back and the message delivered again. Requeued meanwhile, the message went
 * out twice; the requeue is refused (409) until the group's cursor has passed it.
 */
class RequeueUnsettledTest {
  @RegisterExtension static final TestBroker broker = new TestBroker();
  private final Wire wire = new Wire(broker);

  /** Acks the message with the status for group g; its HTTP status. */
  private int ackAs(JsonNode m, String status, String error) {
    return broker
        .post("/api/v1/ack", Wire.ack(m, status, error).put("consumerGroup", "g"))
        .status();
  }

  /** The message's admin path. */
  private static String path(JsonNode m) {
    return "/api/v1/messages/"
        + m.get("partitionId").asText()
        + "/"
        + m.get("transactionId").asText();
  }

  @Test
  void aDeadLetterInsideALeasedBatchIsNotRequeuedAndTheMessageGoesOutOnce() {
    wire.pushNumbered("unsettled", "p", 0, 3);
    JsonNode batch = wire.popPartition("unsettled", "p", "consumerGroup=g&batch=3").json();
    JsonNode m1 = batch.get("messages").get(1);
    assertThat(ackAs(m1, "dlq", "poison")).isEqualTo(200);
    String retry = path(m1) + "/retry";
    TestBroker.Reply refused = broker.post(retry, "{}");
    assertThat(refused.status()).as("inside g's leased batch").isEqualTo(409);
    assertThat(refused.json().get("error").asText()).contains("consumer group g");

    // the batch given back: its dead letter is taken back and the message comes again, once
    JsonNode m0 = batch.get("messages").get(0);
    ackAs(m0, "retry", null);
    JsonNode again = wire.popPartition("unsettled", "p", "consumerGroup=g&batch=10").json();
    assertThat(Wire.numbers(again)).isEqualTo(List.of(0, 1, 2));
    assertThat(wire.ackAll(again)).allMatch(a -> a.get("success").asBoolean());
    assertThat(wire.popPartition("unsettled", "p", "consumerGroup=g&batch=10").status())
        .as("nothing requeued behind them")
        .isEqualTo(204);
  }

  @Test
  void aMessageAnOperatorMovedBeforeItsGroupReachedItIsRequeued() {
    wire.pushNumbered("moved", "p", 0, 3);
    JsonNode batch = wire.popPartition("moved", "p", "consumerGroup=g&batch=1").json();
    assertThat(wire.ackAll(batch)).allMatch(a -> a.get("success").asBoolean());
    String base =
        "/api/v1/messages/"
            + batch.get("messages").get(0).get("partitionId").asText()
            + "/"
            + "moved-p-2"; // pushNumbered's id of n=2
    assertThat(broker.post(base + "/dlq", "{}").status()).isEqualTo(200);
    assertThat(broker.post(base + "/retry", "{}").status())
        .as("g has not reached it, but holds no lease over it: settled")
        .isEqualTo(200);
  }

  // a suffix per requeue grew an id past what the dead letters' index holds
  @Test
  void aMessageRequeuedTwiceCarriesOneRequeueSuffix() {
    wire.configure("twice", Wire.object().put("retryLimit", 0));
    wire.pushNumbered("twice", "p", 0, 1);
    String id = "twice-p-0";
    for (int round = 0; round < 2; round++) {
      JsonNode batch = wire.popPartition("twice", "p", "batch=1").json();
      JsonNode m = batch.get("messages").get(0);
      wire.ackAll(batch, "failed", "again");
      TestBroker.Reply r = broker.post(path(m) + "/retry", "{}");
      assertThat(r.status()).isEqualTo(200);
      String copy = r.json().get("requeuedTransactionId").asText();
      assertThat(copy).startsWith(id + ":requeued:").hasSize(id.length() + 46);
    }
  }

  // a transactionId pushed again once the first message was cleared: two letters, one requeued
  @Test
  void aRequeueRemovesTheLettersOfItsOwnMessageOnly() {
    wire.configure("reused", Wire.object().put("retryLimit", 0));
    JsonNode first = null;
    for (int n = 1; n <= 2; n++) {
      if (n == 2) {
        assertThat(broker.delete("/api/v1/queues/reused/clear").status()).isEqualTo(200);
      }
      broker.post(
          "/api/v1/push",
          Wire.items(List.of(Wire.item("reused", "p", "x", Wire.object().put("n", n)))));
      JsonNode batch = wire.popPartition("reused", "p", "batch=1").json();
      first = batch.get("messages").get(0);
      assertThat(wire.ackAll(batch, "failed", "round " + n).get(0).get("dlq").asBoolean()).isTrue();
    }
    String letters = "select count(*) from queen.dead_letters where transaction_id = 'x'";
    assertThat(broker.sqlLong(letters)).isEqualTo(2);

    assertThat(broker.post(path(first) + "/retry", "{}").status()).isEqualTo(200);
    assertThat(broker.sqlLong(letters)).as("the older message's letter stays").isEqualTo(1);
    assertThat(broker.post(path(first) + "/retry", "{}").status()).isEqualTo(200);
    assertThat(broker.sqlLong(letters)).isZero();
    assertThat(Wire.numbers(wire.popPartition("reused", "p", "batch=10").json()))
        .as("both requeued, the newer first")
        .containsExactly(2, 1);
  }

  // taken back with the batch, the operator's letter went and the batch skipped the moved frame
  @Test
  void anOperatorsMoveOutOfALeasedBatchSurvivesTheBatchGivenBack() {
    wire.pushNumbered("opmove", "p", 0, 3);
    JsonNode batch =
        wire.popPartition("opmove", "p", "consumerGroup=g&batch=3&wait=true&timeout=5000").json();
    JsonNode m1 = batch.get("messages").get(1);
    String base = path(m1);
    assertThat(broker.post(base + "/dlq", "{}").status()).isEqualTo(200);
    assertThat(ackAs(m1, "dlq", "poison")).isEqualTo(200);
    JsonNode m0 = batch.get("messages").get(0);
    ackAs(m0, "retry", null);

    JsonNode again =
        wire.popPartition("opmove", "p", "consumerGroup=g&batch=10&wait=true&timeout=5000").json();
    assertThat(Wire.numbers(again))
        .as("the moved message is not delivered")
        .isEqualTo(List.of(0, 2));
    assertThat(
            broker.sqlText(
                "select string_agg(error_message, ',') from queen.dead_letters"
                    + " where transaction_id = 'opmove-p-1' and consumer_group = 'g'"))
        .as("nor lost: the operator's letter stays")
        .isEqualTo("Moved to dead letter queue by admin");
    assertThat(broker.post(base + "/retry", "{}").status())
        .as("settled: the operator may requeue it")
        .isEqualTo(200);
  }

  // the consumer's letter came first: the operator's move settles it
  @Test
  void anOperatorsMoveOfAMessageItsLeaseDeadLetteredSettlesTheLetter() {
    wire.pushNumbered("opafter", "p", 0, 3);
    JsonNode batch =
        wire.popPartition("opafter", "p", "consumerGroup=g&batch=3&wait=true&timeout=5000").json();
    JsonNode m1 = batch.get("messages").get(1);
    assertThat(ackAs(m1, "dlq", "poison")).isEqualTo(200);
    String base = path(m1);
    assertThat(broker.post(base + "/dlq", "{}").status()).isEqualTo(200);
    JsonNode m0 = batch.get("messages").get(0);
    ackAs(m0, "retry", null);

    JsonNode again =
        wire.popPartition("opafter", "p", "consumerGroup=g&batch=10&wait=true&timeout=5000").json();
    assertThat(Wire.numbers(again)).isEqualTo(List.of(0, 2));
    assertThat(
            broker.sqlLong(
                "select count(*) from queen.dead_letters"
                    + " where transaction_id = 'opafter-p-1' and consumer_group = 'g'"))
        .as("not lost")
        .isEqualTo(1);
  }

  // left, the replayed message was a dead letter too, and its requeue a third delivery
  @Test
  void aSeekBackTakesBackWhatTheLeaseItEndsDeadLettered() {
    wire.pushNumbered("seekback", "p", 0, 3);
    JsonNode batch =
        wire.popPartition("seekback", "p", "consumerGroup=g&batch=3&wait=true&timeout=5000").json();
    JsonNode m1 = batch.get("messages").get(1);
    assertThat(ackAs(m1, "dlq", "poison")).isEqualTo(200);
    assertThat(
            broker
                .post(
                    "/api/v1/consumer-groups/g/queues/seekback/seek",
                    Wire.object().put("timestamp", "2000-01-01T00:00:00Z"))
                .status())
        .isEqualTo(200);

    assertThat(
            broker.sqlLong(
                "select count(*) from queen.dead_letters where transaction_id = 'seekback-p-1'"))
        .as("taken back with the lease the seek ended")
        .isZero();
    JsonNode again =
        wire.popPartition("seekback", "p", "consumerGroup=g&batch=10&wait=true&timeout=5000")
            .json();
    assertThat(Wire.numbers(again)).isEqualTo(List.of(0, 1, 2));
  }
}
