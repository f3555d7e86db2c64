package queen.server.http;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;
import static queen.server.Wire.object;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import queen.server.TestBroker;
import queen.server.Wire;

class PopAckTest {
  @RegisterExtension static final TestBroker broker = new TestBroker();
  private final Wire wire = new Wire(broker);

  @Test
  void thousandMessagesPopInOrderAcrossSeveralPopsWithAcks() {
    for (int from = 0; from < 1000; from += 100) {
      wire.pushNumbered("ordered", "Default", from, 100);
    }
    List<Integer> seen = new ArrayList<>();
    int pops = 0;
    while (true) {
      TestBroker.Reply r = wire.popPartition("ordered", "Default", "batch=150");
      if (r.status() == 204) {
        break;
      }
      assertThat(r.status()).isEqualTo(200);
      pops++;
      seen.addAll(Wire.numbers(r.json()));
      JsonNode acks = wire.ackAll(r.json());
      assertThat(acks).allMatch(a -> a.get("success").asBoolean());
    }
    assertThat(seen).isEqualTo(IntStream.range(0, 1000).boxed().toList());
    assertThat(pops).isEqualTo(7);
    assertThat(broker.sqlLong(Wire.cursorOf("ordered", "__QUEUE_MODE__", "committed")))
        .isEqualTo(999);
  }

  @Test
  void popAnswerCarriesEveryFieldOfTheWireContract() {
    String trace = "5f0e8a0c-8a5e-4b8e-9c1c-0e7f2f4a7b11";
    broker.post(
        "/api/v1/push",
        Wire.items(
            List.of(
                Wire.item("fields", "p1", "txn-1", object().put("hello", "wörld"))
                    .put("traceId", trace))));
    TestBroker.Reply r = wire.popPartition("fields", "p1", "batch=5&consumerGroup=g1");
    assertThat(r.status()).isEqualTo(200);
    assertThat(r.headers().firstValue("content-type")).hasValue("application/json");
    JsonNode body = r.json();
    assertThat(body.get("success").asBoolean()).isTrue();
    assertThat(body.get("queue").asText()).isEqualTo("fields");
    assertThat(body.get("partition").asText()).isEqualTo("p1");
    assertThat(body.get("consumerGroup").asText()).isEqualTo("g1");
    assertThat(body.get("partitionsClaimed").asInt()).isEqualTo(1);
    String leaseId = body.get("leaseId").asText();
    assertThat(UUID.fromString(leaseId).version()).as("leaseId is a UUIDv7").isEqualTo(7);
    JsonNode m = body.get("messages").get(0);
    assertThat(UUID.fromString(m.get("id").asText()).version()).isEqualTo(7);
    assertThat(m.get("transactionId").asText()).isEqualTo("txn-1");
    assertThat(m.get("partitionId").asText())
        .isEqualTo(body.get("partitionId").asText())
        .isNotEmpty();
    assertThat(m.get("partition").asText()).isEqualTo("p1");
    assertThat(m.get("queue").asText()).isEqualTo("fields");
    assertThat(m.get("leaseId").asText()).isEqualTo(leaseId);
    assertThat(m.get("consumerGroup").asText()).isEqualTo("g1");
    assertThat(m.get("data").get("hello").asText()).isEqualTo("wörld");
    assertThat(m.get("traceId").asText()).isEqualTo(trace);
    assertThat(m.get("producerSub").isNull()).isTrue();
    assertThat(m.get("createdAt").asText())
        .matches("\\d{4}-\\d\\d-\\d\\dT\\d\\d:\\d\\d:\\d\\d\\.\\d{6}Z");
  }

  @Test
  void defaultBatchIs200() {
    wire.pushNumbered("defaults", "Default", 0, 100);
    wire.pushNumbered("defaults", "Default", 100, 150);
    JsonNode r = broker.get("/api/v1/pop/queue/defaults/partition/Default").json();
    assertThat(r.get("messages")).hasSize(200);
    assertThat(Wire.numbers(r)).isEqualTo(IntStream.range(0, 200).boxed().toList());
  }

  @Test
  void aBatchStartsMidSegmentAndEndsMidSegment() {
    wire.pushNumbered("slices", "Default", 0, 10);
    wire.pushNumbered("slices", "Default", 10, 10);
    JsonNode a = wire.popPartition("slices", "Default", "batch=7&autoAck=true").json();
    JsonNode b = wire.popPartition("slices", "Default", "batch=7&autoAck=true").json();
    JsonNode c = wire.popPartition("slices", "Default", "batch=7&autoAck=true").json();
    assertThat(Wire.numbers(a)).containsExactly(0, 1, 2, 3, 4, 5, 6);
    assertThat(Wire.numbers(b)).containsExactly(7, 8, 9, 10, 11, 12, 13);
    assertThat(Wire.numbers(c)).containsExactly(14, 15, 16, 17, 18, 19);
  }

  @Test
  void aLeasedBatchIsHiddenFromOthersUntilItExpiresThenRedelivered() {
    // 3 s: the second pop must come within the lease, whatever a loaded machine stalls
    wire.configure("leases", object().put("leaseTime", 3));
    wire.pushNumbered("leases", "Default", 0, 3);
    TestBroker.Reply first = wire.popPartition("leases", "Default", "batch=10");
    assertThat(Wire.numbers(first.json())).containsExactly(0, 1, 2);
    assertThat(wire.popPartition("leases", "Default", "batch=10").status())
        .as("the lease holds the partition")
        .isEqualTo(204);
    assertThat(broker.sqlLong(Wire.cursorOf("leases", "__QUEUE_MODE__", "attempt_count")))
        .isEqualTo(1);

    TestBroker.Reply again =
        await()
            .atMost(Duration.ofSeconds(10))
            .pollInterval(Duration.ofMillis(100))
            .until(
                () -> wire.popPartition("leases", "Default", "batch=10"), r -> r.status() == 200);
    assertThat(Wire.numbers(again.json())).containsExactly(0, 1, 2);
    assertThat(again.json().get("leaseId").asText())
        .isNotEqualTo(first.json().get("leaseId").asText());
    assertThat(broker.sqlLong(Wire.cursorOf("leases", "__QUEUE_MODE__", "attempt_count")))
        .as("redelivery from the same offset counts as a new attempt")
        .isEqualTo(2);
    assertThat(broker.sqlLong(Wire.cursorOf("leases", "__QUEUE_MODE__", "retry_count")))
        .as("lease expiry never charges the retry budget")
        .isZero();
    assertThat(broker.sqlLong(Wire.cursorOf("leases", "__QUEUE_MODE__", "committed")))
        .isEqualTo(-1);
  }

  @Test
  void autoAckAdvancesTheCursorWithoutALease() {
    wire.pushNumbered("auto", "Default", 0, 5);
    JsonNode r = wire.popPartition("auto", "Default", "batch=3&autoAck=true").json();
    assertThat(Wire.numbers(r)).containsExactly(0, 1, 2);
    assertThat(r.get("leaseId").asText()).isEmpty();
    assertThat(r.get("messages").get(0).get("leaseId").asText()).isEmpty();
    assertThat(broker.sqlLong(Wire.cursorOf("auto", "__QUEUE_MODE__", "committed"))).isEqualTo(2);
    assertThat(broker.sqlLong(Wire.cursorOf("auto", "__QUEUE_MODE__", "(worker_id is null)::int")))
        .isEqualTo(1);
    JsonNode next = wire.popPartition("auto", "Default", "batch=3&autoAck=1").json();
    assertThat(Wire.numbers(next)).containsExactly(3, 4);
  }

  @Test
  void consumerGroupsReadIndependently() {
    wire.pushNumbered("fanout", "Default", 0, 4);
    JsonNode a = wire.popPartition("fanout", "Default", "consumerGroup=a&autoAck=true").json();
    JsonNode b = wire.popPartition("fanout", "Default", "consumerGroup=b&autoAck=true").json();
    assertThat(Wire.numbers(a)).containsExactly(0, 1, 2, 3);
    assertThat(Wire.numbers(b)).containsExactly(0, 1, 2, 3);
  }

  @Test
  void aNulCharacterInANameIsA400() {
    assertBad("/api/v1/push", "{\"items\":[{\"queue\":\"a\\u0000b\"}]}", "control characters");
    TestBroker.Reply pop = broker.get("/api/v1/pop/queue/q?consumerGroup=%00");
    assertThat(pop.status()).isEqualTo(400);
    assertThat(pop.json().get("error").asText()).contains("consumerGroup");
  }

  @Test
  void ackOfAnUnknownMessageFailsInsideA200() {
    wire.pushNumbered("unknown", "Default", 0, 1);
    JsonNode pop = wire.popPartition("unknown", "Default", "batch=1").json();
    ObjectNode ack =
        object()
            .put("transactionId", "never-pushed")
            .put("partitionId", pop.get("partitionId").asText());
    TestBroker.Reply r = broker.post("/api/v1/ack", ack);
    assertThat(r.status()).isEqualTo(200);
    assertThat(r.json().get(0).get("success").asBoolean()).isFalse();
    assertThat(r.json().get(0).get("error").asText()).isEqualTo("Message not found");
  }

  @Test
  void nothingToDeliverIs204WithNoBody() {
    wire.pushNumbered("empty", "Default", 0, 1);
    wire.popPartition("empty", "Default", "autoAck=true");
    for (String path :
        List.of(
            "/api/v1/pop/queue/empty/partition/Default",
            "/api/v1/pop/queue/no-such-queue/partition/Default",
            "/api/v1/pop/queue/empty/partition/no-such-partition")) {
      TestBroker.Reply r = broker.get(path);
      assertThat(r.status()).as(path).isEqualTo(204);
      assertThat(r.text()).isEmpty();
    }
  }

  @Test
  void badAcksAre400sAndChangeNothing() {
    wire.pushNumbered("badack", "Default", 0, 1);
    JsonNode pop = wire.popPartition("badack", "Default", "batch=1").json();
    String pid = pop.get("partitionId").asText();
    assertBad("/api/v1/ack", "", "Empty request body");
    assertBad("/api/v1/ack", "{\"partitionId\":\"" + pid + "\"}", "transactionId is required");
    assertBad("/api/v1/ack", "{\"transactionId\":\"t\"}", "partitionId is required");
    assertBad(
        "/api/v1/ack",
        "{\"transactionId\":\"t\",\"partitionId\":\"x\"}",
        "partitionId must be a UUID");
    assertBad(
        "/api/v1/ack",
        "{\"transactionId\":\"t\",\"partitionId\":\"" + pid + "\",\"status\":3}",
        "status must be a string");
    assertBad("/api/v1/ack/batch", "{}", "acknowledgments array is required");
    assertBad(
        "/api/v1/ack/batch",
        "{\"acknowledgments\":[{\"transactionId\":1,\"partitionId\":\"" + pid + "\"}]}",
        "valid transactionId string");
    assertBad(
        "/api/v1/ack/batch",
        "{\"acknowledgments\":[{\"transactionId\":\"t\"}]}",
        "valid partitionId string");
    assertThat(broker.sqlLong(Wire.cursorOf("badack", "__QUEUE_MODE__", "committed")))
        .isEqualTo(-1);
    assertThat(broker.post("/api/v1/ack/batch", "{\"acknowledgments\":[]}").json()).isEmpty();
  }

  @Test
  void aSubscriptionFromThatIsNotATimestampIsA400() {
    TestBroker.Reply r =
        wire.popPartition("anything", "Default", "consumerGroup=g&subscriptionFrom=yesterday");
    assertThat(r.status()).isEqualTo(400);
    assertThat(r.json().get("error").asText()).contains("subscriptionFrom");
  }

  private void assertBad(String path, String body, String message) {
    TestBroker.Reply r = broker.post(path, body);
    assertThat(r.status()).as(body).isEqualTo(400);
    assertThat(r.json().get("error").asText()).as(body).contains(message);
  }
}
