package queen.server.http;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import queen.server.TestBroker;
import queen.server.Wire;
import queen.server.ops.BrokerSampler;

/**
 * The analytics routes of WIRE.md section 15 against a broker whose statistics tick every 100 ms:
 * operations, lag and retention by queue, process and work figures and parked long-polls by broker,
 * PostgreSQL's statistics, and Queen's legacy metrics JSON.
 */
class AnalyticsRoutesTest {
  @RegisterExtension
  static final TestBroker broker =
      new TestBroker(Map.of("QUEEN_STATS_INTERVAL_MS", "100", "RETENTION_INTERVAL", "200"));

  private final Wire wire = new Wire(broker);

  /** The sum of one field over a queue's points in an analytics answer (0 without the queue). */
  private static long sum(JsonNode answer, String queue, String field) {
    long n = 0;
    for (JsonNode q : answer.get("queues")) {
      if (q.get("queue").asText().equals(queue)) {
        for (JsonNode pt : q.get("points")) {
          n += pt.get(field).asLong();
        }
      }
    }
    return n;
  }

  @Test
  void aWindowOfMoreQueueMinutesThanOneAnswerHoldsIsRefused() {
    for (int i = 0; i < 12; i++) {
      broker.post("/api/v1/configure", "{\"queue\":\"an-wide-" + i + "\"}");
    }
    // 12 queues x 8,581 minutes: 102,972 points
    broker.sql(
        "insert into queen.queue_stats_minutes (queue_id, minute, pushed)"
            + " select q.id, m, 1 from queen.queues q cross join generate_series("
            + " date_trunc('minute', now()) - interval '6 days',"
            + " date_trunc('minute', now()) - interval '1 hour', interval '1 minute') m"
            + " where q.name like 'an-wide-%' on conflict do nothing");
    String from = "from=" + java.time.Instant.now().minus(Duration.ofDays(7));
    TestBroker.Reply all = broker.get("/api/v1/analytics/queue-ops?" + from);
    assertThat(all.status()).isEqualTo(400);
    assertThat(all.json().get("error").asText()).contains("name a queue");
    JsonNode one = broker.get("/api/v1/analytics/queue-ops?queue=an-wide-3&" + from).json();
    assertThat(sum(one, "an-wide-3", "pushed")).isEqualTo(8_581);
  }

  // without a cap, a week of many brokers' minutes was read whole and answered as one tree
  @Test
  void aWindowOfMoreBrokerMinutesThanOneAnswerHoldsIsRefused() {
    // 12 brokers x 8,581 minutes: 102,972 points
    broker.sql(
        "insert into queen.broker_stats_minutes (broker_id, minute, hostname, started_at,"
            + " heap_used_bytes, heap_committed_bytes, threads, db_pool_active, db_pool_idle,"
            + " db_pool_waiting) select 'an-fake-' || b, m, 'an-fake-host', now(), 1, 1, 1, 0, 0, 0"
            + " from generate_series(0, 11) b cross join generate_series("
            + " date_trunc('minute', now()) - interval '6 days',"
            + " date_trunc('minute', now()) - interval '1 hour', interval '1 minute') m");
    try {
      String from = "from=" + java.time.Instant.now().minus(Duration.ofDays(7));
      TestBroker.Reply all = broker.get("/api/v1/analytics/system-metrics?" + from);
      assertThat(all.status()).isEqualTo(400);
      assertThat(all.json().get("error").asText()).contains("name a workerId");
      assertThat(broker.get("/api/v1/analytics/system-metrics?workerId=an-fake-3&" + from).status())
          .isEqualTo(200);
    } finally {
      broker.sql("delete from queen.broker_stats_minutes where broker_id like 'an-fake-%'");
    }
  }

  @Test
  void queueOperationsLagAndRetentionArePerMinuteSeriesByQueue() {
    wire.pushNumbered("an-ops", "p", 0, 30);
    JsonNode popped =
        broker.get("/api/v1/pop/queue/an-ops/partition/p?batch=20&autoAck=true").json();
    assertThat(popped.get("messages")).hasSize(20);
    await()
        .atMost(Duration.ofSeconds(10))
        .until(
            () -> {
              JsonNode ops = broker.get("/api/v1/analytics/queue-ops?queue=an-ops").json();
              return sum(ops, "an-ops", "pushed") == 30
                  && sum(ops, "an-ops", "popped") == 20
                  && sum(ops, "an-ops", "acked") == 20;
            });
    JsonNode ops = broker.get("/api/v1/analytics/queue-ops?queue=an-ops").json();
    assertThat(ops.get("interval").asText()).isEqualTo("minute");
    assertThat(ops.get("queues")).hasSize(1);

    broker.post("/api/v1/stats/refresh", Wire.object());
    JsonNode lag = broker.get("/api/v1/analytics/queue-lag?queue=an-ops").json();
    JsonNode points = lag.at("/queues/0/points");
    assertThat(points).isNotEmpty();
    assertThat(points.get(points.size() - 1).get("lagMessages").asLong())
        .as("10 of 30 not consumed")
        .isEqualTo(10);

    wire.configure(
        "an-kept", Wire.object().put("retentionEnabled", true).put("retentionSeconds", 1));
    wire.pushNumbered("an-kept", "p", 0, 12);
    await()
        .atMost(Duration.ofSeconds(30))
        .until(
            () ->
                sum(broker.get("/api/v1/analytics/retention").json(), "an-kept", "deletedMessages")
                    == 12);
  }

  @Test
  void anIdleQueueWritesNoPerMinuteRowsWhileItsSnapshotIsKept() {
    wire.configure("an-idle", Wire.object().put("leaseTime", 30));
    JsonNode refreshed = broker.post("/api/v1/stats/refresh", Wire.object()).json();
    assertThat(refreshed.get("queues").asLong()).as("every queue's snapshot").isPositive();
    assertThat(
            broker.sqlLong(
                "select count(*) from queen.queue_stats s join queen.queues q on q.id ="
                    + " s.queue_id where q.name = 'an-idle'"))
        .isEqualTo(1);
    // a row a minute for a week, for every idle queue, was 1.5 MB a queue
    assertThat(
            broker.sqlLong(
                "select count(*) from queen.queue_stats_minutes m join queen.queues q on q.id ="
                    + " m.queue_id where q.name = 'an-idle'"))
        .isZero();
  }

  @Test
  void everyBrokerReportsItsProcessItsWorkAndItsParkedLongPolls() throws Exception {
    wire.configure("an-park", Wire.object());
    CompletableFuture<HttpResponse<String>> parked =
        HttpClient.newHttpClient()
            .sendAsync(
                HttpRequest.newBuilder(
                        URI.create(
                            "http://127.0.0.1:"
                                + broker.port()
                                + "/api/v1/pop/queue/an-park?wait=true&timeout=20000"))
                    .build(),
                HttpResponse.BodyHandlers.ofString());
    String id = BrokerSampler.hostname() + ":" + broker.port();
    String self = "workerId=" + id;
    await()
        .atMost(Duration.ofSeconds(10))
        .until(
            () -> {
              JsonNode q =
                  broker.get("/api/v1/analytics/queue-parked-replicas?queue=an-park").json();
              return q.get("queues").size() == 1
                  && q.at("/queues/0/replicas/0/workerId").asText().equals(id)
                  && q.at("/queues/0/replicas/0/points").findValues("parked").stream()
                      .anyMatch(n -> n.asInt() == 1);
            });
    wire.pushNumbered("an-park", "p", 0, 1);
    assertThat(parked.get(20, TimeUnit.SECONDS).statusCode()).isEqualTo(200);

    JsonNode system = broker.get("/api/v1/analytics/system-metrics?" + self).json();
    assertThat(system.get("replicas")).hasSize(1);
    JsonNode last = system.at("/replicas/0/points").get(system.at("/replicas/0/points").size() - 1);
    assertThat(last.get("heapUsedBytes").asLong()).isPositive();
    assertThat(last.get("rssBytes").asLong()).as("VmRSS on Linux").isGreaterThan(10 << 20);
    assertThat(last.get("threads").asInt()).isPositive();

    await()
        .atMost(Duration.ofSeconds(10))
        .until(
            () -> {
              long pushed = 0;
              for (JsonNode pt :
                  broker
                      .get("/api/v1/analytics/worker-metrics?" + self)
                      .json()
                      .at("/replicas/0/points")) {
                pushed += pt.get("pushed").asLong();
              }
              return pushed >= 1;
            });
    assertThat(
            broker.get("/api/v1/analytics/worker-metrics?workerId=nobody:1").json().get("replicas"))
        .isEmpty();
  }

  @Test
  void postgresStatisticsAndTheLegacyMetricsAreReadLive() {
    JsonNode pg = broker.get("/api/v1/analytics/postgres-stats").json();
    assertThat(pg.get("database").asText()).isEqualTo(broker.db().database());
    assertThat(pg.get("sizeBytes").asLong()).isPositive();
    assertThat(pg.get("connections")).isNotEmpty();
    assertThat(pg.get("tables").findValuesAsText("name")).contains("log_segments", "log_consumers");

    JsonNode legacy = broker.get("/metrics").json();
    assertThat(legacy.at("/database/poolSize").asInt()).isEqualTo(20);
    assertThat(legacy.at("/memory/heapUsed").asLong()).isPositive();
    assertThat(legacy.get("uptime").asLong()).isNotNegative();
  }

  @Test
  void aWindowThatIsNotOneIsA400NamingIt() {
    TestBroker.Reply backwards =
        broker.get("/api/v1/analytics/queue-ops?from=2026-01-02T00:00:00Z&to=2026-01-01T00:00:00Z");
    assertThat(backwards.status()).isEqualTo(400);
    assertThat(backwards.json().get("error").asText()).contains("from");
    TestBroker.Reply garbled = broker.get("/api/v1/analytics/system-metrics?from=yesterday");
    assertThat(garbled.status()).isEqualTo(400);
    assertThat(garbled.json().get("error").asText()).contains("from");
  }
}
