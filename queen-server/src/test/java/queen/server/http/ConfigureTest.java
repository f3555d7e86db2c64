package queen.server.http;

import static org.assertj.core.api.Assertions.assertThat;
import static queen.server.Wire.object;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.Iterator;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import queen.server.TestBroker;

class ConfigureTest {
  @RegisterExtension static final TestBroker broker = new TestBroker();

  @Test
  void echoesEverySentOptionWithTheSameKeyAndType() {
    ObjectNode options =
        object()
            .put("leaseTime", 120)
            .put("retryLimit", 5)
            .put("priority", 3)
            .put("delayedProcessing", 0)
            .put("windowBuffer", 2)
            .put("maxSize", 0)
            .put("retentionSeconds", 86400)
            .put("completedRetentionSeconds", 60)
            .put("encryptionEnabled", false)
            .put("deadLetterQueue", true)
            .put("minPopWaitTime", 50);
    ObjectNode body = object().put("queue", "cfg").put("namespace", "ns").put("task", "tk");
    body.set("options", options);
    TestBroker.Reply r = broker.post("/api/v1/configure", body);
    assertThat(r.status()).isEqualTo(200);
    JsonNode a = r.json();
    assertThat(a.get("configured").asBoolean()).isTrue();
    assertThat(a.get("queue").asText()).isEqualTo("cfg");
    assertThat(a.get("namespace").asText()).isEqualTo("ns");
    assertThat(a.get("task").asText()).isEqualTo("tk");
    assertThat(a.get("queueId").asText()).matches("[0-9a-f-]{36}");
    assertThat(a.get("partitionId").asText()).matches("[0-9a-f-]{36}");
    for (Iterator<Map.Entry<String, JsonNode>> it = options.fields(); it.hasNext(); ) {
      Map.Entry<String, JsonNode> sent = it.next();
      assertThat(a.get("options").get(sent.getKey())).as(sent.getKey()).isEqualTo(sent.getValue());
    }
    assertThat(
            broker.sqlLong(
                "select count(*) from queen.log_partitions p join queen.queues q on q.id ="
                    + " p.queue_id where q.name = 'cfg' and p.name = 'Default'"))
        .as("Default partition created")
        .isEqualTo(1);
  }

  @Test
  void isAFullReplaceExceptMinPopWaitTime() {
    ObjectNode first = object().put("queue", "replace");
    first.putObject("options").put("leaseTime", 10).put("minPopWaitTime", 250);
    broker.post("/api/v1/configure", first);
    JsonNode second =
        broker
            .post(
                "/api/v1/configure",
                object().put("queue", "replace").set("options", object().put("retryLimit", 1)))
            .json();
    assertThat(second.get("options").get("leaseTime").asInt()).as("absent: default").isEqualTo(300);
    assertThat(second.get("options").get("retryLimit").asInt()).isEqualTo(1);
    assertThat(second.get("options").get("minPopWaitTime").asInt()).as("kept").isEqualTo(250);
    assertThat(second.get("queueId"))
        .isEqualTo(broker.post("/api/v1/configure", first).json().get("queueId"));
  }

  @Test
  void aQueueWithNoOptionsGetsTheDefaults() {
    JsonNode a = broker.post("/api/v1/configure", "{\"queue\":\"bare\"}").json();
    assertThat(a.get("configured").asBoolean()).isTrue();
    assertThat(a.get("options").get("leaseTime").asInt()).isEqualTo(300);
    assertThat(a.get("options").get("retryLimit").asInt()).isEqualTo(3);
    assertThat(a.get("options").has("minPopWaitTime")).isFalse();
  }

  @Test
  void badInputIsA400NamingTheField() {
    assertBad("{}", "queue is required");
    assertBad("{\"queue\":\"\"}", "queue is required");
    assertBad("{\"queue\":5}", "queue is required");
    assertBad("{\"queue\":\"q\",\"namespace\":1}", "namespace must be a string");
    assertBad("{\"queue\":\"q\",\"options\":[]}", "options must be an object");
    assertBad("{\"queue\":\"q\",\"options\":{\"leaseTime\":\"300\"}}", "options.leaseTime");
    assertBad("{\"queue\":\"q\",\"options\":{\"leaseTime\":1.5}}", "options.leaseTime");
    assertBad("{\"queue\":\"q\",\"options\":{\"retryLimit\":-1}}", "options.retryLimit");
    assertBad("{\"queue\":\"q\",\"options\":{\"retentionEnabled\":1}}", "options.retentionEnabled");
    assertBad("{\"queue\":\"q\",\"options\":{\"leaseTime\":99999999999}}", "options.leaseTime");
    assertBad(
        "{\"queue\":\"q\",\"options\":{\"encryptionEnabled\":true}}",
        "options.encryptionEnabled needs QUEEN_ENCRYPTION_KEY");
    assertThat(broker.sqlLong("select count(*) from queen.queues where name = 'q'")).isZero();
  }

  private void assertBad(String body, String message) {
    TestBroker.Reply r = broker.post("/api/v1/configure", body);
    assertThat(r.status()).as(body).isEqualTo(400);
    assertThat(r.json().get("error").asText()).as(body).contains(message);
  }
}
