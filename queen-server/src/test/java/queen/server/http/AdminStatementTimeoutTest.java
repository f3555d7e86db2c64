package queen.server.http;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.sql.Connection;
import java.sql.Statement;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import queen.server.TestBroker;
import queen.server.Wire;

/**
 * QUEEN_ADMIN_STATEMENT_TIMEOUT_MS: an admin read that runs past it is cancelled and answered 503
 * with a message naming the setting, while an admin write runs to its end however long it takes (a
 * cancel would roll it back whole). A lock held on a table the statements need makes them run long
 * at will.
 */
class AdminStatementTimeoutTest {
  private static final long TIMEOUT_MS = 300;

  @RegisterExtension
  static final TestBroker broker =
      new TestBroker(Map.of("QUEEN_ADMIN_STATEMENT_TIMEOUT_MS", Long.toString(TIMEOUT_MS)));

  private final Wire wire = new Wire(broker);

  @Test
  void aReadHeldPastTheLimitIsAnswered503AndTheNextOneIsServed() throws Exception {
    wire.pushNumbered("slow-read", "p", 0, 3);
    try (Connection c = broker.connect()) {
      holdDeadLetters(c);
      // bounded here: without the limit the read would wait for this test's lock forever
      TestBroker.Reply cut =
          CompletableFuture.supplyAsync(() -> broker.get("/api/v1/messages?queue=slow-read"))
              .get(20, TimeUnit.SECONDS);
      assertThat(cut.status()).isEqualTo(503);
      assertThat(cut.json().get("error").asText()).contains("QUEEN_ADMIN_STATEMENT_TIMEOUT_MS");
      c.rollback();
    }
    assertThat(broker.get("/api/v1/messages?queue=slow-read").json().get("messages")).hasSize(3);
  }

  @Test
  void aQueueDeleteHeldPastTheLimitStillDeletesEverything() throws Exception {
    wire.pushNumbered("slow-delete", "p", 0, 3);
    CompletableFuture<TestBroker.Reply> delete;
    try (Connection c = broker.connect()) {
      holdDeadLetters(c);
      delete =
          CompletableFuture.supplyAsync(
              () -> broker.delete("/api/v1/resources/queues/slow-delete"));
      // the delete has waited for the lock three times as long as a read may run
      await()
          .atMost(Duration.ofSeconds(20))
          .until(
              () ->
                  broker.sqlLong(
                          "select count(*) from pg_stat_activity"
                              + " where datname = current_database()"
                              + " and application_name = 'queen-admin' and wait_event_type ="
                              + " 'Lock' and now() - query_start > interval '"
                              + 3 * TIMEOUT_MS
                              + " milliseconds'")
                      == 1);
      c.rollback();
    }
    assertThat(delete.get().status()).isEqualTo(200);
    assertThat(broker.sqlLong("select count(*) from queen.queues where name = 'slow-delete'"))
        .isZero();
  }

  /** Holds an exclusive lock on queen.dead_letters, which the message list and a delete need. */
  // on the main pool, without the limit, a dashboard's dead-letter page held a connection of the
  // pushes and pops for as long as its scan took
  @Test
  void theDeadLetterPageAndTheStatusSummaryAreAdminReads() throws Exception {
    try (Connection c = broker.connect()) {
      holdDeadLetters(c);
      for (String path : List.of("/api/v1/dlq?queue=held", "/api/v1/status")) {
        TestBroker.Reply cut =
            CompletableFuture.supplyAsync(() -> broker.get(path)).get(20, TimeUnit.SECONDS);
        assertThat(cut.status()).as(path).isEqualTo(503);
        assertThat(cut.json().get("error").asText())
            .as(path)
            .contains("QUEEN_ADMIN_STATEMENT_TIMEOUT_MS");
      }
      c.rollback();
    }
  }

  private static void holdDeadLetters(Connection c) throws Exception {
    c.setAutoCommit(false);
    try (Statement st = c.createStatement()) {
      st.execute("lock table queen.dead_letters in access exclusive mode");
    }
  }
}
