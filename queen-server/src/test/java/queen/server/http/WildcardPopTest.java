package queen.server.http;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;
import static queen.server.Wire.object;

import com.fasterxml.jackson.databind.JsonNode;
import java.time.Duration;
import java.util.HashSet;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import queen.server.TestBroker;
import queen.server.Wire;

class WildcardPopTest {
  @RegisterExtension static final TestBroker broker = new TestBroker();
  private final Wire wire = new Wire(broker);

  @Test
  void withPartitionsOneAPopDrainsOnePartitionOnly() {
    for (int p = 0; p < 4; p++) {
      wire.pushNumbered("one", "p" + p, 0, 5);
    }
    JsonNode r = broker.get("/api/v1/pop/queue/one?batch=100").json();
    assertThat(r.get("messages")).hasSize(5);
    assertThat(partitionIds(r)).hasSize(1);
    assertThat(r.get("partitionsClaimed").asInt()).isEqualTo(1);
  }

  @Test
  void partitionsNClaimsUpToNPartitionsUnderOneLeaseWithOneBatchCap() {
    for (int p = 0; p < 4; p++) {
      wire.pushNumbered("multi", "p" + p, 0, 5);
    }
    JsonNode r = broker.get("/api/v1/pop/queue/multi?batch=12&partitions=3").json();
    assertThat(r.get("messages")).hasSize(12);
    assertThat(partitionIds(r)).hasSize(3);
    assertThat(r.get("partitionsClaimed").asInt()).isEqualTo(3);
    Set<String> leases = new HashSet<>();
    r.get("messages").forEach(m -> leases.add(m.get("leaseId").asText()));
    assertThat(leases).containsExactly(r.get("leaseId").asText());
    assertThat(r.get("partitionId").asText())
        .as("top level describes the first claimed partition")
        .isEqualTo(r.get("messages").get(0).get("partitionId").asText());

    JsonNode acks = wire.ackAll(r);
    assertThat(acks).allMatch(a -> a.get("success").asBoolean());
    JsonNode rest = broker.get("/api/v1/pop/queue/multi?batch=100&partitions=4").json();
    assertThat(rest.get("messages")).as("20 pushed, 12 acked").hasSize(8);
  }

  @Test
  void leasedPartitionsAreSkippedAndAnEmptyQueueIs204() {
    wire.pushNumbered("busy", "only", 0, 3);
    assertThat(broker.get("/api/v1/pop/queue/busy").status()).isEqualTo(200);
    assertThat(broker.get("/api/v1/pop/queue/busy").status()).isEqualTo(204);
    assertThat(broker.get("/api/v1/pop/queue/no-such-queue").status()).isEqualTo(204);
  }

  @Test
  void discoveryPopsAcrossQueuesMatchingNamespaceAndTask() {
    wire.pushNumbered("shop.orders.eu", "Default", 0, 2);
    wire.pushNumbered("shop.orders.us", "Default", 0, 2);
    wire.pushNumbered("shop.refunds", "Default", 0, 2);
    wire.pushNumbered("other.orders", "Default", 0, 2);
    Set<String> queues = new HashSet<>();
    for (int i = 0; i < 2; i++) {
      JsonNode r = broker.get("/api/v1/pop?namespace=shop&task=orders&autoAck=true").json();
      r.get("messages").forEach(m -> queues.add(m.get("queue").asText()));
    }
    assertThat(queues).containsExactlyInAnyOrder("shop.orders.eu", "shop.orders.us");
    assertThat(broker.get("/api/v1/pop?namespace=shop&task=orders").status()).isEqualTo(204);

    JsonNode byTask = broker.get("/api/v1/pop?task=orders&batch=10&partitions=5").json();
    assertThat(byTask.get("messages").get(0).get("queue").asText()).isEqualTo("other.orders");
  }

  @Test
  void aBareDiscoveryPopIsA400() {
    TestBroker.Reply r = broker.get("/api/v1/pop");
    assertThat(r.status()).isEqualTo(400);
    assertThat(r.json().get("error").asText()).contains("namespace or task");
    assertThat(broker.get("/api/v1/pop?namespace=&task=").status()).isEqualTo(400);
  }

  @Test
  void windowBufferHoldsThePartitionThenDeliversEverything() {
    // 3 s: the 204 must come within it on a loaded machine
    wire.configure("quiet", object().put("windowBuffer", 3));
    wire.pushNumbered("quiet", "Default", 0, 3);
    assertThat(broker.get("/api/v1/pop/queue/quiet?batch=4").status()).isEqualTo(204);
    JsonNode r =
        await()
            .atMost(Duration.ofSeconds(10))
            .pollInterval(Duration.ofMillis(100))
            .until(() -> broker.get("/api/v1/pop/queue/quiet?batch=4"), x -> x.status() == 200)
            .json();
    assertThat(Wire.numbers(r)).containsExactly(0, 1, 2);
  }

  @Test
  void delayedProcessingDeliversOnlyOnceTheMessageIsOldEnough() {
    // 3 s: the 204 must come within it on a loaded machine
    wire.configure("later", object().put("delayedProcessing", 3));
    wire.pushNumbered("later", "Default", 0, 1);
    assertThat(broker.get("/api/v1/pop/queue/later").status()).isEqualTo(204);
    JsonNode r =
        await()
            .atMost(Duration.ofSeconds(10))
            .pollInterval(Duration.ofMillis(100))
            .until(() -> broker.get("/api/v1/pop/queue/later"), x -> x.status() == 200)
            .json();
    assertThat(Wire.numbers(r)).containsExactly(0);
  }

  @Test
  void aFirstContactPopSeedsEveryPartitionOfTheQueueOnce() {
    for (int p = 0; p < 5; p++) {
      wire.pushNumbered("seeded", "p" + p, 0, 1);
    }
    broker.get("/api/v1/pop/queue/seeded?consumerGroup=first");
    assertThat(
            broker.sqlLong(
                "select count(*) from queen.log_consumers c join queen.log_partitions p on p.id ="
                    + " c.partition_id join queen.queues q on q.id = p.queue_id"
                    + " where q.name = 'seeded' and c.consumer_group = 'first'"))
        .isEqualTo(5);
    assertThat(
            broker.sqlLong(
                "select count(*) from queen.consumer_groups_metadata m join queen.queues q on q.id"
                    + " = m.queue_id where q.name = 'seeded' and m.consumer_group = 'first'"
                    + " and m.seeded_at is not null"))
        .isEqualTo(1);
  }

  private static Set<String> partitionIds(JsonNode r) {
    Set<String> ids = new HashSet<>();
    for (JsonNode m : r.get("messages")) {
      ids.add(m.get("partitionId").asText());
    }
    return ids;
  }
}
