package queen.server.http;

import static org.assertj.core.api.Assertions.assertThat;
import static queen.server.http.ApiErrors.assertError;

import com.fasterxml.jackson.databind.JsonNode;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import queen.server.TestBroker;
import queen.server.Wire;

/**
 * What the consumer-group views show (WIRE.md section 11): a group's cursors, paged, filtered by
 * queue and from a partition name on, and the cursors that lag.
 */
class ConsumerGroupViewsTest {
  @RegisterExtension static final TestBroker broker = new TestBroker();

  private final Wire wire = new Wire(broker);

  @Test
  void groupDetailAndLaggingDescribeTheCursors() {
    wire.pushNumbered("lagq", "p", 0, 5);
    JsonNode leased =
        broker.get("/api/v1/pop/queue/lagq/partition/p?consumerGroup=l&batch=2").json();
    wire.ackAll(leased);
    JsonNode detail = broker.get("/api/v1/consumer-groups/l").json();
    JsonNode c = detail.at("/lagq/partitions/0");
    assertThat(c.get("partition").asText()).isEqualTo("p");
    assertThat(c.get("offsetLag").asInt()).isEqualTo(3);
    assertThat(c.get("totalConsumed").asInt()).isEqualTo(2);
    assertThat(c.get("leaseActive").asBoolean()).isFalse();

    // ?queue= keeps one queue's cursors of a group that reads two
    wire.pushNumbered("lagq2", "p", 0, 1);
    broker.get("/api/v1/pop/queue/lagq2/partition/p?consumerGroup=l&batch=1");
    assertThat(broker.get("/api/v1/consumer-groups/l").json().fieldNames())
        .toIterable()
        .containsExactly("lagq", "lagq2");
    assertThat(broker.get("/api/v1/consumer-groups/l?queue=lagq2").json().fieldNames())
        .toIterable()
        .containsExactly("lagq2");
    assertError(
        broker.get("/api/v1/consumer-groups/l?queue=elsewhere"), 404, "Consumer group not found");
    // paged by queue and partition; the count travels in X-Total-Count
    TestBroker.Reply first = broker.get("/api/v1/consumer-groups/l?limit=1");
    assertThat(first.json().fieldNames()).toIterable().containsExactly("lagq");
    assertThat(first.headers().firstValue("X-Total-Count")).hasValue("2");
    assertThat(broker.get("/api/v1/consumer-groups/l?limit=1&offset=1").json().fieldNames())
        .toIterable()
        .containsExactly("lagq2");
    TestBroker.Reply past = broker.get("/api/v1/consumer-groups/l?offset=5");
    assertThat(past.json().size()).isZero();
    assertThat(past.headers().firstValue("X-Total-Count")).hasValue("2");
    assertError(broker.get("/api/v1/consumer-groups/l?limit=x"), 400, "limit must be an integer");

    // the lagging view reads a snapshot up to a statistics interval old (5 s), which a group's
    // detail may have had taken before this group lagged
    Awaitility.await()
        .atMost(Duration.ofSeconds(15))
        .untilAsserted(
            () ->
                assertThat(broker.get("/api/v1/consumer-groups/lagging?minLagSeconds=0").json())
                    .anySatisfy(
                        l -> {
                          assertThat(l.get("consumer_group").asText()).isEqualTo("l");
                          assertThat(l.get("queue_name").asText()).isEqualTo("lagq");
                          assertThat(l.get("offset_lag").asInt()).isEqualTo(3);
                          assertThat(l.get("oldest_unconsumed_at").asText()).endsWith("Z");
                        }));
    assertThat(broker.get("/api/v1/consumer-groups/lagging?minLagSeconds=3600").json())
        .noneSatisfy(l -> assertThat(l.get("consumer_group").asText()).isEqualTo("l"));
  }

  @Test
  void groupDetailStartsAtAPartitionNameAndLaggingTakesALimit() {
    for (String partition : List.of("a", "b", "c", "d")) {
      wire.pushNumbered("pf", partition, 0, 2);
      wire.ackAll(
          broker
              .get("/api/v1/pop/queue/pf/partition/" + partition + "?consumerGroup=pfg&batch=1")
              .json());
    }
    TestBroker.Reply page =
        broker.get("/api/v1/consumer-groups/pfg?queue=pf&partitionFrom=b&limit=2");
    assertThat(page.json().at("/pf/partitions"))
        .extracting(c -> c.get("partition").asText())
        .containsExactly("b", "c");
    assertThat(page.headers().firstValue("X-Total-Count")).hasValue("3");

    // the view is a snapshot up to an interval old: the four cursors above appear within it
    Awaitility.await()
        .atMost(Duration.ofSeconds(15))
        .untilAsserted(
            () ->
                assertThat(
                        broker
                            .get("/api/v1/consumer-groups/lagging?minLagSeconds=0&limit=2")
                            .json())
                    .hasSize(2));
  }

  @Test
  void pagesOfAGroupOnSeveralQueuesTogetherListEachCursorOnceInQueueAndPartitionOrder() {
    // the group reads pgc and pga, not pgb between them; pga has a partition it does not read
    List<String> expected = new ArrayList<>();
    for (String queue : List.of("pgc", "pga", "pgb")) {
      for (String partition : List.of("k3", "k1", "k4", "k2", "k5")) {
        wire.pushNumbered(queue, partition, 0, 1);
        boolean read = !queue.equals("pgb") && !(queue.equals("pga") && partition.equals("k4"));
        if (read) {
          broker.get(
              "/api/v1/pop/queue/" + queue + "/partition/" + partition + "?consumerGroup=pg");
          expected.add(queue + "/" + partition);
        }
      }
    }
    expected.sort(null);
    for (int limit = 1; limit <= 4; limit++) {
      List<String> seen = new ArrayList<>();
      for (int offset = 0; offset < 12; offset += limit) {
        TestBroker.Reply page =
            broker.get("/api/v1/consumer-groups/pg?limit=" + limit + "&offset=" + offset);
        assertThat(page.headers().firstValue("X-Total-Count")).hasValue("9");
        page.json()
            .properties()
            .forEach(
                q ->
                    q.getValue()
                        .get("partitions")
                        .forEach(c -> seen.add(q.getKey() + "/" + c.get("partition").asText())));
      }
      assertThat(seen).as("pages of %d", limit).isEqualTo(expected);
    }
    // from a partition name on, on every queue the group reads
    TestBroker.Reply from = broker.get("/api/v1/consumer-groups/pg?partitionFrom=k4&limit=2");
    assertThat(from.headers().firstValue("X-Total-Count")).hasValue("3");
    assertThat(from.json().at("/pga/partitions"))
        .extracting(c -> c.get("partition").asText())
        .containsExactly("k5");
    assertThat(from.json().at("/pgc/partitions"))
        .extracting(c -> c.get("partition").asText())
        .containsExactly("k4");
  }

  // the dashboard's queue page asked each group apart, one request per group at every refresh
  @Test
  void aQueuesCursorsOfEveryGroupOnAPageOfItsPartitionsComeInOneAnswer() {
    for (String partition : List.of("a", "b", "c", "d")) {
      wire.pushNumbered("allg", partition, 0, 3);
      wire.ackAll(
          broker
              .get("/api/v1/pop/queue/allg/partition/" + partition + "?consumerGroup=one&batch=1")
              .json());
    }
    wire.ackAll(broker.get("/api/v1/pop/queue/allg/partition/c?consumerGroup=two&batch=3").json());

    JsonNode page =
        broker.get("/api/v1/resources/queues/allg/cursors?partitionFrom=b&limit=2").json();
    assertThat(page.get("queue").asText()).isEqualTo("allg");
    assertThat(page.get("groups").properties())
        .extracting(java.util.Map.Entry::getKey)
        .containsExactly("one", "two");
    assertThat(page.at("/groups/one"))
        .extracting(c -> c.get("partition").asText() + ":" + c.get("offsetLag").asInt())
        .containsExactly("b:2", "c:2");
    assertThat(page.at("/groups/two"))
        .extracting(c -> c.get("partition").asText() + ":" + c.get("offsetLag").asInt())
        .containsExactly("c:0");
    assertThat(page.at("/groups/one/0/committedOffset").asLong()).isZero();

    assertError(broker.get("/api/v1/resources/queues/none-such/cursors"), 404, "Queue not found");
    assertThat(broker.get("/api/v1/resources/queues/allg/cursors?limit=x").status()).isEqualTo(400);
  }
}
