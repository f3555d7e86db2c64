package queen.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;
import static queen.cli.CliRuns.run;
import static queen.cli.CliRuns.runWithBrokenStdout;

import com.fasterxml.jackson.databind.JsonNode;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import queen.cli.CliRuns.Run;
import queen.server.TestBroker;

/** The CLI's listings and administration: queues, groups, dead letters, messages, statistics. */
class CliAdminTest {
  @RegisterExtension
  static final TestBroker broker = new TestBroker(Map.of("QUEEN_STATS_INTERVAL_MS", "200"));

  private static String url() {
    return "--url=http://127.0.0.1:" + broker.port();
  }

  @Test
  void dlqRetryRequeuesAMessageDeadLetteredInTwoGroupsOnce() {
    run("", "push", url(), "cli-dlq2", "{\"x\":1}");
    for (String group : List.of("a", "b")) {
      Run popped = run("", "pop", url(), "cli-dlq2", "-g", group);
      assertThat(run(popped.out(), "ack", url(), "--status", "dlq").exit()).isZero();
    }
    Run dlq = run("", "dlq", url(), "cli-dlq2", "--retry");
    assertThat(dlq.exit()).as(dlq.err()).isZero();
    assertThat(dlq.lines()).hasSize(2);
    assertThat(dlq.lines())
        .extracting(n -> n.get("requeuedTransactionId").asText())
        .containsOnly(dlq.lines().getFirst().get("requeuedTransactionId").asText());
  }

  // requeued newest first, a partition's letters came back in reverse order
  @Test
  void dlqRetryRequeuesAPartitionsLettersInTheirOrder() {
    run("", "push", url(), "cli-dlq-order", "{\"n\":1}", "{\"n\":2}");
    for (int i = 0; i < 2; i++) {
      Run popped = run("", "pop", url(), "cli-dlq-order", "-b", "1");
      assertThat(run(popped.out(), "ack", url(), "--status", "dlq").exit()).isZero();
    }
    assertThat(run("", "dlq", url(), "cli-dlq-order", "--retry").exit()).isZero();
    assertThat(run("", "pop", url(), "cli-dlq-order", "-b", "2").lines())
        .extracting(m -> m.get("data").get("n").asInt())
        .containsExactly(1, 2);
  }

  @Test
  void queuesGroupsAndDeadLetters() {
    run("", "push", url(), "cli-ops", "{\"x\":1}");
    Run popped = run("", "pop", url(), "cli-ops", "-g", "ops");
    Run dead = run(popped.out(), "ack", url(), "--status", "dlq", "--error", "bad input");
    assertThat(dead.lines().getFirst().get("dlq").asBoolean()).isTrue();

    assertThat(run("", "queues", url()).out()).contains("cli-ops").contains("QUEUE");
    assertThat(run("", "groups", url()).out()).contains("ops").contains("cli-ops");
    Run dlq = run("", "dlq", url(), "cli-ops", "--retry");
    assertThat(dlq.exit()).isZero();
    JsonNode letter = dlq.lines().getFirst();
    assertThat(letter.get("errorMessage").asText()).isEqualTo("bad input");
    assertThat(letter.get("requeuedTransactionId").asText()).contains(":requeued:");
  }

  // `dlq --retry | head -1` requeued the whole page; `queues` printed nowhere exited 0
  @Test
  void aRetryThatCannotPrintRequeuesNoMoreAndEveryCommandSaysItsOutputFailed() {
    run("", "push", url(), "cli-dlq-pipe", "{\"n\":1}", "{\"n\":2}", "{\"n\":3}");
    Run popped = run("", "pop", url(), "cli-dlq-pipe", "-b", "3");
    run(popped.out(), "ack", url(), "--status", "dlq", "--error", "bad");
    Run retry = runWithBrokenStdout("dlq", url(), "cli-dlq-pipe", "--retry");
    assertThat(retry.exit()).as(retry.err()).isEqualTo(4);
    assertThat(run("", "dlq", url(), "cli-dlq-pipe").lines())
        .as("the letter whose line failed, and no other, requeued")
        .hasSize(2);
    assertThat(retry.err()).contains("requeued unprinted");
    assertThat(runWithBrokenStdout("queues", url()).exit()).isEqualTo(4);
  }

  @Test
  void groupsAreShownSoughtAndDeleted() {
    run("", "push", url(), "cli-seek", "{\"n\":1}", "{\"n\":2}");
    Run first = run("", "pop", url(), "cli-seek", "-g", "replay", "-b", "10");
    assertThat(run(first.out(), "ack", url()).exit()).isZero();
    Run moved = run("", "groups", "subscription", url(), "replay", "2000-01-01T00:00:00Z");
    assertThat(moved.exit()).as(moved.err()).isZero();
    // the broker answers success and changes nothing: its first consume read the whole backlog
    Run never = run("", "groups", "subscription", url(), "never-read", "2000-01-01T00:00:00Z");
    assertThat(never.exit()).isEqualTo(1);
    assertThat(never.err()).contains("has no subscription record");

    Run seek =
        run("", "groups", "seek", url(), "replay", "cli-seek", "--to", "2000-01-01T00:00:00Z");
    assertThat(seek.exit()).as(seek.err()).isZero();
    assertThat(seek.lines().getFirst().get("partitionsUpdated").asInt()).isEqualTo(1);
    assertThat(run("", "groups", "show", url(), "replay").out())
        .contains("cli-seek")
        .contains("LAG");
    Run again = run("", "pop", url(), "cli-seek", "-g", "replay", "-b", "10");
    assertThat(again.lines()).hasSize(2);
    assertThat(run(again.out(), "ack", url()).exit()).isZero();

    assertThat(run("", "groups", "seek", url(), "replay", "cli-seek").exit())
        .as("--to or --to-end is required")
        .isEqualTo(2);
    Run deleted = run("", "groups", "delete", url(), "replay");
    assertThat(deleted.lines().getFirst().get("deletedPartitions").asInt()).isEqualTo(1);
    assertThat(run("", "pop", url(), "cli-seek", "-g", "replay", "-b", "10").lines()).hasSize(2);
    Run unknown = run("", "groups", "seek", url(), "replay", "nowhere", "--to-end");
    assertThat(unknown.exit()).isEqualTo(1);
    assertThat(unknown.err()).contains("Queue not found");
  }

  // Queen MQ ignores limit and offset: a group of 10,000 cursors was asked for the same page for
  // ever, each appended to the listing
  @Test
  void groupsShowAgainstABrokerThatDoesNotPageEnds() throws Exception {
    StringBuilder page = new StringBuilder("{\"q\":{\"partitions\":[");
    for (int i = 0; i < 10_000; i++) {
      page.append(i == 0 ? "" : ",")
          .append("{\"partition\":\"p")
          .append(i)
          .append("\",\"partitionId\":\"")
          .append(new java.util.UUID(0, i))
          .append("\"}");
    }
    byte[] body = page.append("]}}").toString().getBytes(java.nio.charset.StandardCharsets.UTF_8);
    com.sun.net.httpserver.HttpServer stub =
        com.sun.net.httpserver.HttpServer.create(new java.net.InetSocketAddress("127.0.0.1", 0), 0);
    stub.createContext(
        "/",
        exchange -> {
          exchange.getResponseHeaders().add("Content-Type", "application/json");
          exchange.sendResponseHeaders(200, body.length);
          exchange.getResponseBody().write(body);
          exchange.close();
        });
    stub.start();
    try {
      String url = "--url=http://127.0.0.1:" + stub.getAddress().getPort();
      Run shown =
          org.junit.jupiter.api.Assertions.assertTimeoutPreemptively(
              Duration.ofSeconds(60), () -> run("", "groups", "show", url, "g", "--json"));
      assertThat(shown.exit()).as(shown.err()).isZero();
      assertThat(shown.lines().getFirst().get("q").get("partitions")).hasSize(10_000);
    } finally {
      stub.stop(0);
    }
  }

  @Test
  void messagesAreListedShownTracedAndDeleted() {
    run("", "push", url(), "cli-msg", "-p", "p", "{\"n\":1}", "{\"n\":2}");
    Run listed = run("", "messages", url(), "cli-msg");
    assertThat(listed.exit()).as(listed.err()).isZero();
    assertThat(listed.lines()).hasSize(2);
    JsonNode newest = listed.lines().getFirst();
    String pid = newest.get("partitionId").asText();
    String txn = newest.get("transactionId").asText();

    Run shown = run("", "message", url(), pid, txn);
    assertThat(shown.lines().getFirst().get("payload").get("n").asInt()).isEqualTo(2);
    broker.post(
        "/api/v1/traces",
        "{\"transactionId\":\""
            + txn
            + "\",\"partitionId\":\""
            + pid
            + "\",\"traceNames\":[\"cli-flow\",\"cli-other\"],\"data\":{\"ok\":true}}");
    assertThat(run("", "traces", url(), pid, txn).lines()).hasSize(1);
    assertThat(run("", "traces", url(), "--name", "cli-flow").lines()).hasSize(1);
    assertThat(run("", "traces", url(), pid, txn, "--name", "cli-flow").exit())
        .as("a message and a name: the name was ignored")
        .isEqualTo(2);
    assertThat(run("", "traces", url()).out()).contains("cli-flow", "cli-other");
    assertThat(run("", "traces", url(), "-n", "1").lines()).as("-n pages the names").hasSize(1);

    assertThat(run("", "message", url(), pid, txn, "--delete").exit()).isZero();
    assertThat(run("", "message", url(), pid, txn).exit()).as("gone").isEqualTo(1);
    assertThat(run("", "messages", url(), "cli-msg").lines()).hasSize(1);
  }

  @Test
  void statsPrintOneLinePerMinuteWithItsQueueOrBroker() {
    run("", "push", url(), "cli-stats", "-p", "p", "{\"n\":1}", "{\"n\":2}", "{\"n\":3}");
    await()
        .atMost(Duration.ofSeconds(10))
        .untilAsserted(
            () -> {
              Run ops = run("", "stats", url(), "queue-ops", "-q", "cli-stats");
              assertThat(ops.exit()).as(ops.err()).isZero();
              assertThat(ops.lines()).allMatch(l -> l.get("queue").asText().equals("cli-stats"));
              assertThat(ops.lines().stream().mapToLong(l -> l.get("pushed").asLong()).sum())
                  .isEqualTo(3);
            });
    await()
        .atMost(Duration.ofSeconds(10))
        .untilAsserted(
            () -> {
              Run throughput =
                  run("", "stats", url(), "throughput", "-q", "cli-stats", "--interval", "minute");
              assertThat(throughput.exit()).as(throughput.err()).isZero();
              assertThat(throughput.lines())
                  .allMatch(l -> l.has("timestamp") && l.has("lagMessages"));
              assertThat(throughput.lines().stream().mapToLong(l -> l.get("pushed").asLong()).sum())
                  .isEqualTo(3);
            });
    await()
        .atMost(Duration.ofSeconds(10))
        .untilAsserted(
            () ->
                assertThat(run("", "stats", url(), "worker-metrics").lines())
                    .isNotEmpty()
                    .allMatch(l -> l.has("workerId") && l.has("timestamp") && l.has("pushed")));
    JsonNode pg = run("", "stats", url(), "postgres-stats").lines().getFirst();
    assertThat(pg.has("tables")).as(pg.toString()).isTrue();

    Run badSeries = run("", "stats", url(), "nonsense");
    assertThat(badSeries.exit()).isEqualTo(2);
    Run badWindow = run("", "stats", url(), "queue-ops", "--from", "yesterday");
    assertThat(badWindow.exit()).isEqualTo(1);
    assertThat(badWindow.err()).contains("from");
    assertThat(run("", "stats", url(), "queue-ops", "--interval", "hour").exit()).isEqualTo(2);
    Run badInterval = run("", "stats", url(), "throughput", "--interval", "week");
    assertThat(badInterval.exit()).isEqualTo(1);
    assertThat(badInterval.err()).contains("interval must be minute, hour or day");
  }
}
