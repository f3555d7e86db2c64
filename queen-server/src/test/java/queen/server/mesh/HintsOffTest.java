package queen.server.mesh;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

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
import queen.server.Broker;
import queen.server.TestBroker;
import queen.server.Wire;

/**
 * Hints are an accelerator, never the floor: a broker that sends none (QUEEN_HINTS=false, as a lost
 * NOTIFY or a full notification queue would leave it) still reaches a long-poll parked on another
 * broker within that broker's backoff interval, and its switches within the state refresh.
 */
class HintsOffTest {
  @RegisterExtension
  static final TestBroker broker = new TestBroker(Map.of("QUEEN_HINTS", "false"));

  /** B: hints on, a 300 ms backoff and state refresh. */
  private static final Map<String, String> FLOOR =
      Map.of(
          "POP_WAIT_INITIAL_INTERVAL_MS", "300",
          "POP_WAIT_MAX_INTERVAL_MS", "300",
          "QUEEN_STATE_REFRESH_MS", "300");

  private final HttpClient http = HttpClient.newHttpClient();

  @Test
  void aPushThroughABrokerWithoutHintsReachesAPopParkedOnAnotherWithinItsFloor() throws Exception {
    try (Broker b = broker.startAnother(FLOOR)) {
      new Wire(broker).configure("floor", Wire.object());
      CompletableFuture<HttpResponse<String>> parked =
          http.sendAsync(
              HttpRequest.newBuilder(
                      URI.create(
                          "http://127.0.0.1:"
                              + b.port()
                              + "/api/v1/pop/queue/floor?wait=true&timeout=20000"))
                  .build(),
              HttpResponse.BodyHandlers.ofString());
      await()
          .atMost(Duration.ofSeconds(10))
          .until(() -> broker.metric(b, "queen_queue_parked_consumers", "queue=\"floor\"") == 1);
      long t0 = System.nanoTime();
      new Wire(broker).pushNumbered("floor", "p", 0, 1);
      HttpResponse<String> r = parked.get(20, TimeUnit.SECONDS);
      assertThat(r.statusCode()).isEqualTo(200);
      assertThat(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0))
          .as("found by B's own watch, far inside the 20 s the pop would wait")
          .isLessThan(3_000);
      assertThat(broker.metric("queen_hints_sent_total", "")).as("A sent nothing").isZero();
      assertThat(
              broker.sqlLong(
                  "select count(*) from pg_stat_activity where application_name = 'queen-hints'"
                      + " and datname = current_database()"))
          .as("only B listens")
          .isEqualTo(1);

      MeshTest.popMaintenanceReaches(broker, b, "floor-switch");
    }
  }
}
