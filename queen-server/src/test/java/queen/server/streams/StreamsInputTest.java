package queen.server.streams;

import static org.assertj.core.api.Assertions.assertThat;
import static queen.server.Wire.object;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import queen.server.TestBroker;
import queen.server.Wire;

/** What the streams routes refuse, with a 400 or 409 naming the field, and what they store. */
class StreamsInputTest {
  @RegisterExtension static final TestBroker broker = new TestBroker();
  private final Wire wire = new Wire(broker);
  private final Streams streams = new Streams(broker);

  @Test
  void registrationNamesEachMissingField() {
    for (String field : List.of("name", "source_queue", "config_hash")) {
      ObjectNode body = Streams.query("q-missing", "src", "h");
      body.remove(field);
      TestBroker.Reply r = broker.post("/streams/v1/queries", body);
      assertThat(r.status()).isEqualTo(400);
      assertThat(r.json().get("error").asText()).contains(field);
      body.put(field, "");
      assertThat(broker.post("/streams/v1/queries", body).json().get("error").asText())
          .contains(field);
    }
  }

  @Test
  void aHashPostgresqlWouldStoreAsAnotherIsA400() {
    // a lone surrogate is stored as '?': every registration of it, reset too, was a 409
    String body =
        "{\"name\":\"q-surrogate\",\"source_queue\":\"src\",\"config_hash\":\"h\\ud800\"}";
    TestBroker.Reply r = broker.post("/streams/v1/queries", body);
    assertThat(r.status()).isEqualTo(400);
    assertThat(r.json().get("error").asText()).contains("config_hash");
  }

  @Test
  void theSameHashWithOtherQueuesIsAConflictToo() {
    broker.post("/streams/v1/queries", Streams.query("q-queues", "queues-a", "h"));
    TestBroker.Reply r =
        broker.post("/streams/v1/queries", Streams.query("q-queues", "queues-b", "h"));
    assertThat(r.status()).isEqualTo(409);
    assertThat(r.json().get("error").asText()).contains("queues-a").contains("queues-b");
  }

  @Test
  void stateThatPostgresqlCannotHoldIsA400NamingTheOperation() {
    String id = streams.register("q-bad-state", "bad-state-src");
    ObjectNode base =
        object().put("query_id", id).put("partition_id", "00000000-0000-0000-0000-000000000002");
    ObjectNode longKey = base.deepCopy();
    longKey.putArray("state_ops").addObject().put("type", "upsert").put("key", "k".repeat(2000));
    ObjectNode noType = base.deepCopy();
    noType.putArray("state_ops").addObject().put("key", "k");
    String prefix = base.toString().replaceAll("}$", ",");
    // JSON escapes that decode to characters jsonb refuses: NUL, and a lone surrogate
    String nul =
        prefix + "\"state_ops\":[{\"type\":\"upsert\",\"key\":\"k\",\"value\":\"a\\u0000b\"}]}";
    String lone =
        prefix + "\"state_ops\":[{\"type\":\"upsert\",\"key\":\"k\",\"value\":[\"\\ud800\"]}]}";
    // beyond PostgreSQL's numeric (131,072 digits before the point): the cast failed, a 500
    String huge =
        prefix + "\"state_ops\":[{\"type\":\"upsert\",\"key\":\"k\",\"value\":{\"n\":1e999999}}]}";
    for (String body : List.of(longKey.toString(), nul, lone, noType.toString(), huge)) {
      TestBroker.Reply r = broker.post("/streams/v1/cycle", body);
      assertThat(r.status()).as(r.text()).isEqualTo(400);
      assertThat(r.json().get("error").asText()).startsWith("state_ops[0]");
    }
  }

  @Test
  void malformedCyclesAre400sNamingTheField() {
    assertThat(broker.post("/streams/v1/cycle", object()).json().get("error").asText())
        .contains("query_id");
    ObjectNode noPartition = object().put("query_id", "00000000-0000-0000-0000-000000000001");
    assertThat(broker.post("/streams/v1/cycle", noPartition).json().get("error").asText())
        .contains("partition_id");
    ObjectNode badOps =
        noPartition.deepCopy().put("partition_id", "00000000-0000-0000-0000-000000000002");
    badOps.putArray("state_ops").addObject().put("type", "upsert");
    TestBroker.Reply r = broker.post("/streams/v1/cycle", badOps);
    assertThat(r.status()).isEqualTo(400);
    assertThat(r.json().get("error").asText()).contains("state_ops[0].key");
    ObjectNode unknown =
        noPartition.deepCopy().put("partition_id", "00000000-0000-0000-0000-000000000002");
    JsonNode refused = broker.post("/streams/v1/cycle", unknown).json();
    assertThat(refused.get("success").asBoolean()).isFalse();
    assertThat(refused.get("error").asText()).contains("Unknown query_id");
  }

  @Test
  void aNumberOfAThousandDigitsIsStoredAndReadBack() {
    String id = streams.register("q-long-number", "long-number-src");
    wire.pushNumbered("long-number-src", "p0", 0, 1);
    JsonNode m = streams.pop("long-number-src", 1).get("messages").get(0);
    ObjectNode body = Streams.cycle(id, m, "long-number-out", "k", 1);
    String text = body.toString().replace("{\"count\":1}", "{\"count\":1e1000}");
    assertThat(broker.post("/streams/v1/cycle", text).json().get("success").asBoolean()).isTrue();
    // PostgreSQL prints it as 1,001 digits, past Jackson's default limit of 1,000 per number;
    // the value is answered as PostgreSQL prints it (a space after the colon)
    ObjectNode get =
        object().put("query_id", id).put("partition_id", m.get("partitionId").asText());
    TestBroker.Reply r = broker.post("/streams/v1/state/get", get);
    assertThat(r.status()).isEqualTo(200);
    assertThat(r.text().replace(" ", "")).contains("{\"count\":1" + "0".repeat(1000) + "}");
  }

  @Test
  void aStateReadOfMorePagesThanOneFetchAnswersEveryRowInKeyOrder() {
    String id = streams.register("q-many-keys", "many-keys-src");
    wire.pushNumbered("many-keys-src", "p0", 0, 1);
    String pid = streams.pop("many-keys-src", 1).get("messages").get(0).get("partitionId").asText();
    broker.sql(
        "insert into queen.stream_state (query_id, partition_id, key, value, updated_at)"
            + " select '"
            + id
            + "', '"
            + pid
            + "', 'k' || lpad(i::text, 5, '0'), jsonb_build_object('n', i), now()"
            + " from generate_series(1, 1234) i");
    JsonNode rows = streams.state(id, pid);
    assertThat(rows).hasSize(1234);
    assertThat(rows.get(0).get("key").asText()).isEqualTo("k00001");
    assertThat(rows.get(1233).get("key").asText()).isEqualTo("k01234");
    assertThat(rows.get(1233).get("value").get("n").asInt()).isEqualTo(1234);
  }
}
