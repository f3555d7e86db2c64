package queen.server.http;

import static org.assertj.core.api.Assertions.assertThat;
import static queen.server.http.ApiErrors.assertError;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.UUID;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import queen.server.TestBroker;
import queen.server.Wire;

/** Traces recorded against messages and read back (WIRE.md section 13). */
class TraceTest {
  @RegisterExtension static final TestBroker broker = new TestBroker();
  private final Wire wire = new Wire(broker);

  private static ObjectNode trace(JsonNode message, Object names, JsonNode data) {
    ObjectNode t =
        Wire.object()
            .put("transactionId", message.get("transactionId").asText())
            .put("partitionId", message.get("partitionId").asText())
            .put("consumerGroup", "billing")
            .put("eventType", "info");
    t.set("traceNames", TestBroker.JSON.valueToTree(names));
    t.set("data", data);
    return t;
  }

  @Test
  void aTraceRoundTripsByMessageAndByName() {
    wire.pushNumbered("traced", "p", 0, 2);
    JsonNode popped = broker.get("/api/v1/pop/queue/traced/partition/p?batch=2").json();
    JsonNode first = popped.get("messages").get(0);
    JsonNode second = popped.get("messages").get(1);

    JsonNode r =
        broker
            .post(
                "/api/v1/traces",
                trace(first, new String[] {"order-flow", "audit"}, Wire.object().put("step", 1)))
            .json();
    assertThat(r.get("success").asBoolean()).isTrue();
    String traceId = r.get("traceId").asText();
    broker.post("/api/v1/traces", trace(first, "order-flow", Wire.object().put("step", 2)));
    broker.post("/api/v1/traces", trace(second, null, Wire.object().put("step", 3)));

    String path = "/api/v1/traces/" + first.get("partitionId").asText() + "/traced-p-0";
    JsonNode ofFirst = broker.get(path).json().get("traces");
    assertThat(ofFirst).hasSize(2);
    assertThat(ofFirst.get(0).get("id").asText()).isEqualTo(traceId);
    assertThat(ofFirst.get(0).get("data").get("step").asInt()).isEqualTo(1);
    assertThat(ofFirst.get(0).get("consumer_group").asText()).isEqualTo("billing");
    assertThat(ofFirst.get(0).get("event_type").asText()).isEqualTo("info");
    assertThat(ofFirst.get(0).get("trace_names"))
        .extracting(JsonNode::asText)
        .containsExactly("order-flow", "audit");
    assertThat(ofFirst.get(1).get("trace_names"))
        .extracting(JsonNode::asText)
        .containsExactly("order-flow");

    JsonNode byName = broker.get("/api/v1/traces/by-name/order-flow?limit=1").json();
    assertThat(byName.get("total").asInt()).isEqualTo(2);
    assertThat(byName.get("traces")).hasSize(1);
    JsonNode newest = byName.get("traces").get(0);
    assertThat(newest.get("data").get("step").asInt()).as("newest first").isEqualTo(2);
    assertThat(newest.get("transaction_id").asText()).isEqualTo("traced-p-0");
    assertThat(newest.get("queue_name").asText()).isEqualTo("traced");
    assertThat(newest.get("partition_name").asText()).isEqualTo("p");
    assertThat(newest.get("message_payload").get("n").asInt()).isZero();
    assertThat(byName.at("/pagination/limit").asInt()).isEqualTo(1);
    JsonNode page2 = broker.get("/api/v1/traces/by-name/order-flow?limit=1&offset=1").json();
    assertThat(page2.at("/traces/0/data/step").asInt()).isEqualTo(1);

    JsonNode names = broker.get("/api/v1/traces/names").json();
    assertThat(names.get("total").asInt()).isEqualTo(2);
    assertThat(broker.get("/api/v1/traces/names?offset=10").json().get("total").asInt())
        .as("a page past the end (0 before)")
        .isEqualTo(2);
    JsonNode flow = names.get("trace_names").get(0);
    assertThat(flow.get("trace_name").asText()).isEqualTo("order-flow");
    assertThat(flow.get("trace_count").asInt()).isEqualTo(2);
    assertThat(flow.get("message_count").asInt()).isEqualTo(1);

    String secondPath = "/api/v1/traces/" + second.get("partitionId").asText() + "/traced-p-1";
    assertThat(broker.get(secondPath).json().get("traces").get(0).get("trace_names")).isEmpty();
  }

  @Test
  void badInputAndUnknownMessagesAreNamed() {
    wire.pushNumbered("tbad", "p", 0, 1);
    JsonNode m = broker.get("/api/v1/pop/queue/tbad/partition/p").json().get("messages").get(0);
    String pid = m.get("partitionId").asText();

    ObjectNode noIds = Wire.object();
    noIds.set("data", Wire.object());
    assertError(
        broker.post("/api/v1/traces", noIds), 400, "transactionId and partitionId are required");
    ObjectNode noData = Wire.object().put("transactionId", "tbad-p-0").put("partitionId", pid);
    assertError(broker.post("/api/v1/traces", noData), 400, "data is required");
    assertError(
        broker.post("/api/v1/traces", trace(m, 42, Wire.object())),
        400,
        "traceNames must be a string or an array of strings");
    ObjectNode badPid = trace(m, "x", Wire.object()).put("partitionId", "not-a-uuid");
    assertError(broker.post("/api/v1/traces", badPid), 400, "partitionId must be a UUID");
    // jsonb holds no NUL character: a client's mistake, not the database's error (a 500)
    assertError(
        broker.post("/api/v1/traces", trace(m, "x", Wire.object().put("a", "nul\u0000"))),
        400,
        "data must not contain NUL characters or unpaired surrogates");
    ObjectNode unknown = trace(m, "x", Wire.object()).put("transactionId", "never-pushed");
    assertError(broker.post("/api/v1/traces", unknown), 404, "Message not found");
    assertError(
        broker.get("/api/v1/traces/" + UUID.randomUUID() + "/tbad-p-0"), 404, "Message not found");
    assertError(broker.get("/api/v1/traces/nope/tbad-p-0"), 400, "partitionId must be a UUID");
    assertThat(
            broker.sqlLong(
                "select count(*) from queen.message_traces where partition_id = '" + pid + "'"))
        .isZero();
  }
}
