package queen.client;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import queen.server.TestBroker;

/** The client's consumer-group administration and message traces against a real broker. */
class AdminTest {
  @RegisterExtension static final TestBroker broker = new TestBroker();
  static Queen queen;

  @BeforeAll
  static void connect() {
    queen = Queen.connect("http://127.0.0.1:" + broker.port());
  }

  @AfterAll
  static void close() {
    queen.close();
  }

  record N(int n) {}

  private static List<Integer> drain(String queue, String group) {
    List<Integer> out = new ArrayList<>();
    while (true) {
      List<Message> batch = queen.queue(queue).group(group).batch(100).wait(false).pop();
      if (batch.isEmpty()) {
        return out;
      }
      batch.forEach(m -> out.add(m.data(N.class).n()));
      queen.ack(batch, true);
    }
  }

  @Test
  void aGroupIsReadAgainAfterADeleteAndSkipsAheadAfterASeekToTheEnd() {
    for (int n = 0; n < 5; n++) {
      queen.queue("adm").partition("p").push(new N(n));
    }
    assertThat(drain("adm", "g")).containsExactly(0, 1, 2, 3, 4);
    assertThat(queen.admin().deleteConsumerGroup("g", true).get("deletedPartitions").asInt())
        .isEqualTo(1);
    assertThat(drain("adm", "g")).containsExactly(0, 1, 2, 3, 4);

    queen.admin().seek("g", "adm", Instant.parse("2000-01-01T00:00:00Z"));
    assertThat(queen.admin().consumerGroup("g").at("/adm/partitions/0/offsetLag").asInt())
        .isEqualTo(5);
    queen.admin().seekToEnd("g", "adm");
    assertThat(drain("adm", "g")).isEmpty();
    assertThat(queen.admin().seekPartitionToEnd("g", "adm", "p").get("cursorMovedTo").asInt())
        .isEqualTo(4);
    assertThat(queen.admin().updateSubscription("g", Instant.now()).get("success").asBoolean())
        .isTrue();
    assertThat(queen.admin().laggingConsumerGroups(0).isArray()).isTrue();

    assertThatThrownBy(() -> queen.admin().seekToEnd("g", "no-such-queue"))
        .isInstanceOfSatisfying(
            QueenException.class, e -> assertThat(e.getMessage()).contains("Queue not found"));
  }

  @Test
  void aGroupAndAPartitionHoldingASlashAreAdministeredByName() {
    for (int n = 0; n < 3; n++) {
      queen.queue("adm-slash").partition("user/42").push(new N(n));
    }
    assertThat(drain("adm-slash", "team/billing")).containsExactly(0, 1, 2);
    assertThat(queen.admin().consumerGroup("team/billing").at("/adm-slash/partitions").size())
        .isEqualTo(1);
    assertThat(
            queen
                .admin()
                .seekPartitionToEnd("team/billing", "adm-slash", "user/42")
                .get("partitionName")
                .asText())
        .isEqualTo("user/42");
    assertThat(
            queen
                .admin()
                .deleteConsumerGroup("team/billing", true)
                .get("deletedPartitions")
                .asInt())
        .isEqualTo(1);
    assertThat(drain("adm-slash", "team/billing")).containsExactly(0, 1, 2);
  }

  @Test
  void aMessageTracesItselfFromInsideAHandler() throws Exception {
    queen.queue("adm-trace").push(new N(7));
    AtomicBoolean traced = new AtomicBoolean();
    queen
        .queue("adm-trace")
        .limit(1)
        .each()
        .consume(m -> traced.set(m.trace("checkout", Map.of("step", "paid"))))
        .await();
    assertThat(traced).isTrue();
    JsonNode names = broker.get("/api/v1/traces/names").json();
    assertThat(names.at("/trace_names/0/trace_name").asText()).isEqualTo("checkout");
    JsonNode byName = broker.get("/api/v1/traces/by-name/checkout").json();
    assertThat(byName.at("/traces/0/data/step").asText()).isEqualTo("paid");
    assertThat(byName.at("/traces/0/message_payload/n").asInt()).isEqualTo(7);
  }

  @Test
  void messagesAreListedShownMovedToTheDeadLettersAndDeleted() {
    for (int n = 0; n < 3; n++) {
      queen.queue("adm-msg").partition("p").push(new N(n));
    }
    JsonNode list = queen.admin().messages(Map.of("queue", "adm-msg"));
    assertThat(list.get("messages")).hasSize(3);
    String partitionId = list.at("/messages/0/partitionId").asText();
    String newest = list.at("/messages/0/transactionId").asText();
    String oldest = list.at("/messages/2/transactionId").asText();
    assertThat(queen.admin().message(partitionId, newest).at("/payload/n").asInt()).isEqualTo(2);

    assertThat(
            queen.admin().moveToDeadLetters(partitionId, newest).at("/consumerGroups/0").asText())
        .isEqualTo("__QUEUE_MODE__");
    assertThat(queen.admin().deleteMessage(partitionId, oldest).get("success").asBoolean())
        .isTrue();
    assertThat(drain("adm-msg", "__QUEUE_MODE__")).containsExactly(1);
    assertThat(broker.get("/api/v1/dlq?queue=adm-msg").json().at("/messages/0/data/n").asInt())
        .isEqualTo(2);
    assertThatThrownBy(() -> queen.admin().message(partitionId, oldest))
        .isInstanceOf(QueenException.class);
  }

  @Test
  void analyticsSeriesAreReadByName() {
    queen.queue("adm-an").partition("p").push(new N(1));
    JsonNode ops = queen.admin().analyticsSeries("queue-ops", Map.of("queue", "adm-an"));
    assertThat(ops.get("interval").asText()).isEqualTo("minute");
    assertThat(ops.has("queues")).isTrue();
    JsonNode pg = queen.admin().analyticsSeries("postgres-stats", Map.of());
    assertThat(pg.get("tables").findValuesAsText("name")).contains("log_segments");
    assertThatThrownBy(
            () -> queen.admin().analyticsSeries("queue-ops", Map.of("from", "yesterday")))
        .isInstanceOf(QueenException.class)
        .hasMessageContaining("from");
  }
}
