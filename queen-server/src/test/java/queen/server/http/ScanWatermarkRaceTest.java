package queen.server.http;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.sql.Connection;
import java.sql.Statement;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.function.Supplier;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import queen.server.TestBroker;
import queen.server.Wire;

/**
 * A seek back racing the SQL scan path's empty-scan check: the check saw the group caught up and
 * writes a watermark, which would hide the replay from the scan until the next push. The seek waits
 * for the check and removes its watermark.
 */
class ScanWatermarkRaceTest {
  @RegisterExtension static final TestBroker broker = new TestBroker();
  private final Wire wire = new Wire(broker);

  @Test
  void aSeekBackWaitsForAnEmptyScanCheckInFlightAndRemovesItsWatermark() throws Exception {
    raceWithTheCheck(
        "replay",
        () ->
            broker.post(
                "/api/v1/consumer-groups/g/queues/replay/seek",
                Wire.object().put("timestamp", "2000-01-01T00:00:00Z")));
  }

  @Test
  void aGroupDeleteWaitsForAnEmptyScanCheckInFlightAndRemovesItsWatermark() throws Exception {
    raceWithTheCheck("reread", () -> broker.delete("/api/v1/consumer-groups/g/queues/reread"));
  }

  /** Runs {@code admin} while a check that found group g caught up on the queue is in flight. */
  private void raceWithTheCheck(String name, Supplier<TestBroker.Reply> admin) throws Exception {
    wire.pushNumbered(name, "a", 0, 3);
    wire.ackAll(wire.popPartition(name, "a", "consumerGroup=g&batch=10").json());
    String queue = "(select id from queen.queues where name = '" + name + "')";
    try (Connection scan = broker.connect();
        Statement st = scan.createStatement()) {
      // what a scan that claimed nothing does at its end (R__35): the check, which finds the
      // group caught up and writes the watermark, committed only with the pop
      scan.setAutoCommit(false);
      st.execute(
          "select queen.log_scan_watermark_check_v1(" + queue + ", 'g', '-infinity', null, now())");
      CompletableFuture<TestBroker.Reply> reset = CompletableFuture.supplyAsync(admin);
      await()
          .atMost(Duration.ofSeconds(10))
          .until(() -> reset.isDone() || broker.advisoryLockWaiters() > 0);
      assertThat(reset).as("waiting for the check").isNotDone();
      scan.commit();
      assertThat(reset.get().status()).isEqualTo(200);
    }
    assertThat(
            broker.sqlLong(
                "select count(*) from queen.log_scan_watermarks w join queen.queues q"
                    + " on q.id = w.queue_id where q.name = '"
                    + name
                    + "' and w.consumer_group = 'g'"))
        .as("no watermark written before the reset outlives it")
        .isZero();
  }
}
