package queen.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;

import com.fasterxml.jackson.databind.JsonNode;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.PipedInputStream;
import java.io.PipedOutputStream;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Deque;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import picocli.CommandLine;
import queen.server.TestBroker;

class CliTest {
  @RegisterExtension
  static final TestBroker broker = new TestBroker(Map.of("QUEEN_STATS_INTERVAL_MS", "200"));

  record Run(int exit, String out, String err) {
    List<JsonNode> lines() {
      List<JsonNode> nodes = new ArrayList<>();
      out.lines().filter(l -> !l.isBlank()).forEach(l -> nodes.add(Ndjson.parse(l, "output")));
      return nodes;
    }
  }

  private static Run run(String stdin, String... args) {
    return run(stdin.getBytes(StandardCharsets.UTF_8), args);
  }

  private static Run run(byte[] stdin, String... args) {
    StringWriter out = new StringWriter();
    StringWriter err = new StringWriter();
    CommandLine cmd = Main.commandLine();
    cmd.setOut(new PrintWriter(out, true));
    cmd.setErr(new PrintWriter(err, true));
    InputStream saved = System.in;
    System.setIn(new ByteArrayInputStream(stdin));
    try {
      return new Run(cmd.execute(args), out.toString(), err.toString());
    } finally {
      System.setIn(saved);
    }
  }

  /**
   * As {@link #run}, with stdout failing at every write (a pipe closed by head, a full disk); a
   * flush with nothing written succeeds, as on a pipe.
   */
  private static Run runWithBrokenStdout(String... args) {
    StringWriter err = new StringWriter();
    CommandLine cmd = Main.commandLine();
    cmd.setOut(
        new PrintWriter(
            new Writer() {
              @Override
              public void write(char[] buf, int off, int len) throws IOException {
                throw new IOException("Broken pipe");
              }

              @Override
              public void flush() {}

              @Override
              public void close() {}
            },
            true));
    cmd.setErr(new PrintWriter(err, true));
    return new Run(cmd.execute(args), "", err.toString());
  }

  private static String url() {
    return "--url=http://127.0.0.1:" + broker.port();
  }

  @Test
  void pushPopAckRoundTripThroughPipes() {
    Run pushed = run("", "push", url(), "cli-q", "-p", "a", "{\"n\":1}", "{\"n\":2}");
    assertThat(pushed.exit()).isZero();
    assertThat(pushed.lines())
        .extracting(n -> n.get("status").asText())
        .containsExactly("queued", "queued");

    Run popped = run("", "pop", url(), "cli-q", "-b", "10");
    assertThat(popped.exit()).isZero();
    assertThat(popped.lines())
        .extracting(n -> n.get("data").get("n").asInt())
        .containsExactly(1, 2);

    Run acked = run(popped.out(), "ack", url());
    assertThat(acked.exit()).isZero();
    assertThat(acked.lines())
        .extracting(n -> n.get("success").asBoolean())
        .containsExactly(true, true);

    // a retried ack (its first answer lost) succeeds and moves nothing back
    Run again = run(popped.out(), "ack", url());
    assertThat(again.exit()).isZero();
    assertThat(again.lines())
        .extracting(n -> n.get("success").asBoolean())
        .containsExactly(true, true);
    assertThat(run("", "pop", url(), "cli-q").out()).isEmpty();
  }

  @Test
  void pushReadsNdjsonFromStdinAndTailPrintsUntilItsLimit() {
    Run pushed = run("{\"n\":1}\n{\"n\":2}\n\n{\"n\":3}\n", "push", url(), "cli-tail");
    assertThat(pushed.lines()).hasSize(3);

    Run tail = run("", "tail", url(), "cli-tail", "--limit", "3");
    assertThat(tail.exit()).isZero();
    assertThat(tail.lines())
        .extracting(n -> n.get("data").get("n").asInt())
        .containsExactly(1, 2, 3);
    assertThat(run("", "pop", url(), "cli-tail").out()).as("tail acked them").isEmpty();
  }

  @Test
  void popAndTailLeaveWhatTheyCouldNotWriteUnacked() {
    for (String queue : List.of("cli-broken-pop", "cli-broken-tail")) {
      broker.post(
          "/api/v1/configure", "{\"queue\":\"" + queue + "\",\"options\":{\"leaseTime\":1}}");
      run("", "push", url(), queue, "{\"n\":1}", "{\"n\":2}", "{\"n\":3}");
    }
    Run pop = runWithBrokenStdout("pop", url(), "cli-broken-pop", "-b", "10", "--ack");
    assertThat(pop.exit()).as(pop.err()).isEqualTo(4);
    Run tail = runWithBrokenStdout("tail", url(), "cli-broken-tail", "--limit", "3");
    assertThat(tail.exit()).as(tail.err()).isEqualTo(4);
    assertThat(tail.err()).contains("not acked");
    for (String queue : List.of("cli-broken-pop", "cli-broken-tail")) {
      // acked before, though printed nowhere: gone
      await()
          .atMost(Duration.ofSeconds(20))
          .until(() -> run("", "pop", url(), queue, "-b", "10").lines().size() == 3);
    }
  }

  @Test
  void pushFromAStreamThatStaysOpenPushesEachLineAsItComes() throws Exception {
    PipedOutputStream producer = new PipedOutputStream();
    InputStream saved = System.in;
    System.setIn(new PipedInputStream(producer));
    CommandLine cmd = Main.commandLine();
    cmd.setOut(new PrintWriter(new StringWriter(), true));
    cmd.setErr(new PrintWriter(new StringWriter(), true));
    AtomicInteger exit = new AtomicInteger(-1);
    Thread push =
        Thread.ofVirtual().start(() -> exit.set(cmd.execute("push", url(), "cli-stream")));
    try {
      producer.write("{\"n\":1}\n{\"n\":2}\n".getBytes(StandardCharsets.UTF_8));
      producer.flush();
      // before, stdin was read to its end first: nothing was pushed while it stayed open
      AtomicInteger popped = new AtomicInteger();
      await()
          .atMost(Duration.ofSeconds(10))
          .until(
              () -> {
                TestBroker.Reply r = broker.get("/api/v1/pop/queue/cli-stream?batch=10");
                return popped.addAndGet(r.status() == 200 ? r.json().get("messages").size() : 0)
                    == 2;
              });
      producer.close();
      push.join(Duration.ofSeconds(10));
      assertThat(exit.get()).isZero();
    } finally {
      producer.close();
      System.setIn(saved);
    }
  }

  @Test
  void popAckPrintsOnlyMessagesOnStdout() {
    run("", "push", url(), "cli-pop-ack", "{\"n\":1}", "{\"n\":2}");
    Run popped = run("", "pop", url(), "cli-pop-ack", "-b", "10", "--ack");
    assertThat(popped.exit()).isZero();
    assertThat(popped.lines()).hasSize(2).allSatisfy(n -> assertThat(n.has("data")).isTrue());
  }

  @Test
  void inputThatIsNotOneJsonValueIsBadUsage() {
    for (String bad : List.of("{\"a\":1},{\"a\":2}", "")) {
      Run pushed = run("", "push", url(), "cli-bad-json", bad);
      assertThat(pushed.exit()).as(bad).isEqualTo(2);
    }
    Run stdin = run("{\"n\":1}{\"n\":2}\n", "push", url(), "cli-bad-json");
    assertThat(stdin.exit()).isEqualTo(2);
    assertThat(stdin.err()).contains("stdin line 1");
    assertThat(run("", "pop", url(), "cli-bad-json").out()).as("nothing pushed").isEmpty();
    Run from = run("", "tail", url(), "cli-bad-json", "--from", "yesterday", "--idle", "1");
    assertThat(from.exit()).isEqualTo(2);
    assertThat(from.err()).contains("--from");
  }

  @Test
  void stdinThatIsNotUtf8IsBadUsage() {
    byte[] latin1 = "{\"s\":\"caf\u00e9\"}\n".getBytes(StandardCharsets.ISO_8859_1);
    Run pushed = run(latin1, "push", url(), "cli-latin1");
    assertThat(pushed.exit()).isEqualTo(2);
    assertThat(pushed.err()).contains("stdin is not UTF-8 at or after line 1");
    assertThat(run("", "pop", url(), "cli-latin1").out()).as("not pushed as U+FFFD").isEmpty();
  }

  @Test
  void tailWithIdleEndsWhenTheBrokerStaysUnreachable() {
    Run tail =
        assertTimeoutPreemptively(
            Duration.ofSeconds(60),
            () -> run("", "tail", "--url=http://127.0.0.1:1", "cli-away", "--idle", "2"));
    assertThat(tail.exit()).as(tail.err()).isEqualTo(3);
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
            + "\",\"traceNames\":\"cli-flow\",\"data\":{\"ok\":true}}");
    assertThat(run("", "traces", url(), pid, txn).lines()).hasSize(1);
    assertThat(run("", "traces", url(), "--name", "cli-flow").lines()).hasSize(1);
    assertThat(run("", "traces", url(), pid, txn, "--name", "cli-flow").exit())
        .as("a message and a name: the name was ignored")
        .isEqualTo(2);
    assertThat(run("", "traces", url()).out()).contains("cli-flow");

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

  @Test
  void exitCodesTellRefusedFromUnreachableFromMisused() {
    Run badJson = run("", "push", url(), "cli-bad", "{not json");
    assertThat(badJson.exit()).as("bad usage: nothing was sent").isEqualTo(2);
    assertThat(badJson.err()).contains("DATA argument 1 is not JSON");

    Run unreachable = run("", "queues", "--url=http://127.0.0.1:1", "--request-timeout=2");
    assertThat(unreachable.exit()).isEqualTo(3);

    assertThat(run("", "pop").exit()).as("missing queue").isEqualTo(2);
  }

  @Test
  void helpListsEverySubcommandAndTheReadmeNamesThem() throws Exception {
    Run help = run("", "--help");
    assertThat(help.exit()).isZero();
    String readme = Files.readString(Path.of("../README.md"));
    for (String sub : Main.commandLine().getSubcommands().keySet()) {
      assertThat(help.out()).contains(sub);
      if (!sub.equals("help")) {
        assertThat(readme).as("README documents ./queen %s", sub).contains("./queen " + sub);
      }
    }
  }

  @Test
  void everyCommandAtEveryDepthAnswersHelp() {
    Deque<CommandLine> todo = new ArrayDeque<>();
    todo.add(Main.commandLine());
    int checked = 0;
    while (!todo.isEmpty()) {
      CommandLine c = todo.pop();
      todo.addAll(c.getSubcommands().values());
      if (c.getCommandName().equals("help")) {
        continue;
      }
      // "queen bench push" is run as bench push --help
      List<String> args =
          new ArrayList<>(List.of(c.getCommandSpec().qualifiedName(" ").split(" ")));
      args.set(0, "--help");
      Collections.rotate(args, -1);
      Run help = run("", args.toArray(String[]::new));
      assertThat(help.exit()).as("queen %s", args).isZero();
      assertThat(help.out()).as("queen %s", args).startsWith("Usage:");
      checked++;
    }
    assertThat(checked).as("commands checked").isGreaterThan(30);
  }
}
