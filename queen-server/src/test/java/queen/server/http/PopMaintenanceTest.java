package queen.server.http;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.time.Duration;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import queen.server.TestBroker;
import queen.server.Wire;

class PopMaintenanceTest {
  /**
   * No background refresh or sweep: every database call in a test is one a request made. A parked
   * pop looks again only when woken (a 30 s backoff), so that an answer at once is the switch's.
   */
  @RegisterExtension
  static final TestBroker broker =
      new TestBroker(
          TestBroker.quiet(
              Map.of(
                  "POP_WAIT_INITIAL_INTERVAL_MS", "30000", "POP_WAIT_MAX_INTERVAL_MS", "30000")));

  @Test
  void whileOnEveryPopAnswers204AtOnceWithNoSql() {
    Wire wire = new Wire(broker);
    wire.pushNumbered("paused", "p", 0, 3);
    TestBroker.Reply on = broker.post("/api/v1/system/maintenance/pop", "{\"enabled\":true}");
    assertThat(on.json().get("popMaintenanceMode").asBoolean()).isTrue();

    long before = broker.dbCalls();
    for (String path :
        new String[] {
          "/api/v1/pop/queue/paused",
          "/api/v1/pop/queue/paused/partition/p",
          "/api/v1/pop?namespace=paused",
          "/api/v1/pop/queue/paused?wait=true&timeout=5000"
        }) {
      long t0 = System.nanoTime();
      TestBroker.Reply r = broker.get(path);
      assertThat(r.status()).as(path).isEqualTo(204);
      assertThat(System.nanoTime() - t0).as("at once").isLessThan(2_000_000_000L);
    }
    assertThat(broker.dbCalls()).as("no SQL").isEqualTo(before);

    assertThat(
            broker
                .get("/api/v1/system/maintenance/pop")
                .json()
                .get("popMaintenanceMode")
                .asBoolean())
        .isTrue();
    broker.post("/api/v1/system/maintenance/pop", "{\"enabled\":false}");
    assertThat(Wire.numbers(broker.get("/api/v1/pop/queue/paused?batch=10").json()))
        .containsExactly(0, 1, 2);
  }

  @Test
  void aPopParkedBeforeTheSwitchAnswers204AtOnceAndTakesNothing() throws Exception {
    Wire wire = new Wire(broker);
    CompletableFuture<TestBroker.Reply> parked =
        CompletableFuture.supplyAsync(
            () -> broker.get("/api/v1/pop/queue/parked-then-paused?wait=true&timeout=20000"));
    await()
        .atMost(Duration.ofSeconds(10))
        .until(
            () ->
                broker.metric("queen_queue_parked_consumers", "queue=\"parked-then-paused\"") >= 1);
    broker.post("/api/v1/system/maintenance/pop", "{\"enabled\":true}");
    // it stayed parked, and a push woke it to deliver after the switch said every pop answers 204
    TestBroker.Reply r = parked.get(10, TimeUnit.SECONDS);
    assertThat(r.status()).as("answered well before its 20 s deadline, empty").isEqualTo(204);
    wire.pushNumbered("parked-then-paused", "p", 0, 1);

    broker.post("/api/v1/system/maintenance/pop", "{\"enabled\":false}");
    assertThat(Wire.numbers(broker.get("/api/v1/pop/queue/parked-then-paused").json()))
        .as("kept for the pops after the switch")
        .containsExactly(0);
  }

  @Test
  void theSwitchNeedsABoolean() {
    TestBroker.Reply r = broker.post("/api/v1/system/maintenance/pop", "{\"enabled\":\"yes\"}");
    assertThat(r.status()).isEqualTo(400);
    assertThat(r.json().get("error").asText()).isEqualTo("enabled (boolean) is required");
  }

  @Test
  void theMetricsEndpointExposesTheSchedulingMeters() {
    TestBroker.Reply r = broker.get("/metrics/prometheus");
    assertThat(r.status()).isEqualTo(200);
    assertThat(r.headers().firstValue("content-type").orElse("")).startsWith("text/plain");
    assertThat(r.text())
        .contains("queen_pop_limiter_limit")
        .contains("queen_pop_limiter_inflight")
        .contains("queen_pop_empty_without_permit_total")
        .contains("queen_db_calls_total")
        .contains("queen_db_pool_active")
        .contains("queen_db_pool_waiting")
        .contains("jvm_memory_used_bytes")
        .contains("jvm_gc_live_data_size_bytes")
        .contains("process_uptime_seconds");
  }
}
