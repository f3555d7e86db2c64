package queen.server.http;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import java.time.Duration;
import java.util.Map;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import queen.server.TestBroker;
import queen.server.Wire;

/**
 * Status, analytics and resources (WIRE.md sections 14, 15, 18) against a small dataset: two
 * queues, seven messages, three delivered and acked, one dead-lettered.
 */
class StatusRoutesTest {
  @RegisterExtension
  static final TestBroker broker = new TestBroker(Map.of("QUEEN_STATS_INTERVAL_MS", "200"));

  @BeforeAll
  static void dataset() {
    Wire wire = new Wire(broker);
    wire.pushNumbered("shop.orders", "p", 0, 5);
    wire.pushNumbered("shop.refunds", "r", 0, 2);
    JsonNode three = broker.get("/api/v1/pop/queue/shop.orders/partition/p?batch=3").json();
    wire.ackAll(three);
    JsonNode one = broker.get("/api/v1/pop/queue/shop.refunds/partition/r?batch=1").json();
    wire.ackAll(one, "dlq", "broken refund");
    broker.post("/api/v1/stats/refresh", "{}");
    // every count flushed into the minute rows
    Awaitility.await()
        .atMost(Duration.ofSeconds(10))
        .until(
            () ->
                broker.sqlLong("select coalesce(sum(pushed), 0) from queen.queue_stats_minutes")
                        == 7
                    && broker.sqlLong(
                            "select coalesce(sum(acked + dead_lettered), 0)"
                                + " from queen.queue_stats_minutes")
                        == 4);
    broker.post("/api/v1/stats/refresh", "{}");
  }

  @Test
  void statusSumsTheMinuteRowsAndTheSnapshot() {
    JsonNode s = broker.get("/api/v1/status").json();
    assertThat(s.get("bucketMinutes").asInt()).isEqualTo(1);
    long ingested = 0;
    long processed = 0;
    long popped = 0;
    for (JsonNode p : s.get("throughput")) {
      ingested += p.get("ingested").asLong();
      processed += p.get("processed").asLong();
      popped += p.get("popMessages").asLong();
    }
    assertThat(ingested).isEqualTo(7);
    assertThat(processed).isEqualTo(3);
    assertThat(popped).isEqualTo(4);
    assertThat(s.at("/messages/total").asInt()).isEqualTo(7);
    assertThat(s.at("/messages/completed").asInt()).as("3 acked, 1 dead-lettered").isEqualTo(4);
    assertThat(s.at("/messages/pending").asInt()).isEqualTo(3);
    assertThat(s.at("/messages/deadLetter").asInt()).isEqualTo(1);
    assertThat(s.at("/deadLetterQueue/totalMessages").asInt()).isEqualTo(1);
    assertThat(s.at("/deadLetterQueue/topErrors/0/error").asText()).isEqualTo("broken refund");
    assertThat(s.get("queues")).hasSize(2);
    assertThat(s.get("statsAge").asLong()).isBetween(0L, 60L);

    JsonNode lagged = null;
    for (JsonNode p : s.get("throughput")) {
      lagged = p.get("lagMessages").isNull() ? lagged : p;
    }
    assertThat(lagged.get("lagMessages").asInt()).as("2 of orders and 1 of refunds").isEqualTo(3);

    JsonNode one = broker.get("/api/v1/status?queue=shop.refunds").json();
    assertThat(one.at("/messages/total").asInt()).isEqualTo(2);
    JsonNode orders = broker.get("/api/v1/status?queue=shop.orders").json();
    assertThat(orders.at("/deadLetterQueue/totalMessages").asInt())
        .as("the dead letter is of shop.refunds")
        .isZero();
    assertThat(orders.at("/deadLetterQueue/affectedPartitions").asInt()).isZero();
    assertThat(orders.at("/deadLetterQueue/topErrors")).isEmpty();
    assertThat(broker.get("/api/v1/status?from=yesterday").status()).isEqualTo(400);
    // buckets of 43 million minutes: seconds past a 32-bit integer in SQL answered 500
    assertThat(
            broker.get("/api/v1/status?from=0001-01-01T00:00:00Z&to=9999-12-31T00:00:00Z").status())
        .isEqualTo(200);
  }

  @Test
  void analyticsBucketsTheMinutes() {
    JsonNode a = broker.get("/api/v1/status/analytics?interval=minute&queue=shop.orders").json();
    assertThat(a.get("interval").asText()).isEqualTo("minute");
    long pushed = 0;
    for (JsonNode p : a.get("dataPoints")) {
      pushed += p.get("pushed").asLong();
      assertThat(p.get("timestamp").asText()).endsWith(":00.000Z");
    }
    assertThat(pushed).isEqualTo(5);
    JsonNode day = broker.get("/api/v1/status/analytics?interval=day").json();
    assertThat(day.get("dataPoints")).hasSize(1);
    assertThat(day.at("/dataPoints/0/messages").asInt()).isEqualTo(7);
    TestBroker.Reply bad = broker.get("/api/v1/status/analytics?interval=week");
    assertThat(bad.status()).isEqualTo(400);
    assertThat(bad.json().get("error").asText()).isEqualTo("interval must be minute, hour or day");
  }

  @Test
  void queuesAndOneQueue() {
    JsonNode list = broker.get("/api/v1/status/queues?namespace=shop&limit=1").json();
    assertThat(list.get("queues")).hasSize(1);
    assertThat(list.get("total").asInt()).isEqualTo(2);

    JsonNode q = broker.get("/api/v1/status/queues/shop.orders").json();
    assertThat(q.at("/queue/namespace").asText()).isEqualTo("shop");
    assertThat(q.at("/queue/task").asText()).isEqualTo("orders");
    assertThat(q.at("/queue/config/leaseTime").asInt()).isEqualTo(300);
    assertThat(q.at("/partitions/0/name").asText()).isEqualTo("p");
    assertThat(q.at("/partitions/0/messages/completed").asInt()).isEqualTo(3);
    assertThat(q.at("/partitions/0/messages/pending").asInt()).isEqualTo(2);
    assertThat(q.at("/partitions/0/oldestMessage").asText()).endsWith("Z");
    assertThat(q.at("/totals/messages/total").asInt()).isEqualTo(5);
    assertThat(broker.get("/api/v1/status/queues/nope").status()).isEqualTo(404);

    JsonNode msgs = broker.get("/api/v1/status/queues/shop.orders/messages?limit=2").json();
    assertThat(msgs).hasSize(2);
    assertThat(msgs.get(0).get("transactionId").asText()).isEqualTo("shop.orders-p-4");
    assertThat(msgs.get(1).get("status").asText()).isEqualTo("pending");

    JsonNode buffers = broker.get("/api/v1/status/buffers").json();
    assertThat(buffers.get("dbHealthy").asBoolean()).isTrue();
    assertThat(buffers.get("pending").asInt()).isZero();
  }

  @Test
  void resourcesDescribeQueuesNamespacesTasksAndPartitions() {
    JsonNode detail = broker.get("/api/v1/resources/queues/shop.refunds").json();
    assertThat(detail.at("/partitions/0/stats/deadLetter").asInt()).isEqualTo(1);
    assertThat(detail.at("/totals/total").asInt()).isEqualTo(2);
    assertThat(broker.get("/api/v1/resources/queues/nope").status()).isEqualTo(404);

    JsonNode ns = broker.get("/api/v1/resources/namespaces").json();
    assertThat(ns.at("/namespaces/0/namespace").asText()).isEqualTo("shop");
    assertThat(ns.at("/namespaces/0/queues").asInt()).isEqualTo(2);
    assertThat(ns.at("/namespaces/0/messages/total").asInt()).isEqualTo(7);
    JsonNode tasks = broker.get("/api/v1/resources/tasks").json();
    assertThat(tasks.get("tasks"))
        .extracting(t -> t.get("task").asText())
        .containsExactly("orders", "refunds");

    JsonNode overview = broker.get("/api/v1/resources/overview").json();
    assertThat(overview.get("queues").asInt()).isEqualTo(2);
    assertThat(overview.get("partitions").asInt()).isEqualTo(2);
    assertThat(overview.at("/messages/total").asInt()).isEqualTo(7);
    assertThat(overview.at("/lag/offset/max").asInt()).isEqualTo(2);
    assertThat(overview.at("/throughput/ingestedPerSecond").asDouble()).isPositive();

    JsonNode parts = broker.get("/api/v1/resources/partitions?queue=shop.orders").json();
    assertThat(parts.get("total").asInt()).isEqualTo(1);
    assertThat(parts.at("/partitions/0/messages").asInt()).isEqualTo(5);
    JsonNode past = broker.get("/api/v1/resources/partitions?queue=shop.orders&offset=10").json();
    assertThat(past.get("total").asInt()).as("a page past the end (0 before)").isEqualTo(1);
  }
}
