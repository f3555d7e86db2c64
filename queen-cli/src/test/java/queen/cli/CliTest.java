package queen.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;
import static queen.cli.CliRuns.run;
import static queen.cli.CliRuns.runWithBrokenStdout;

import java.io.InputStream;
import java.io.PipedInputStream;
import java.io.PipedOutputStream;
import java.io.PrintWriter;
import java.io.StringWriter;
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
import queen.cli.CliRuns.Run;
import queen.server.TestBroker;

/** The CLI's push, pop, ack and tail through pipes, its input, exit statuses and help. */
class CliTest {
  @RegisterExtension
  static final TestBroker broker = new TestBroker(Map.of("QUEEN_STATS_INTERVAL_MS", "200"));

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

    Run grouped = run(popped.out(), "ack", url(), "-g", "other");
    assertThat(grouped.exit()).as("the messages name their own group").isEqualTo(2);
    assertThat(grouped.err()).contains("messages read from stdin carry their own");
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

  // how many lines before a bad one were pushed depended on how the pipe chunked them
  @Test
  void aBadStdinLinePushesEveryLineBeforeItAndSaysSo() {
    Run pushed = run("{\"n\":1}\n{\"n\":2}\nbad\n{\"n\":3}\n", "push", url(), "cli-bad-line");
    assertThat(pushed.exit()).isEqualTo(2);
    assertThat(pushed.err()).contains("stdin line 3").contains("2 messages were pushed before");
    assertThat(pushed.lines()).hasSize(2);
    assertThat(run("", "pop", url(), "cli-bad-line", "-b", "10").lines())
        .extracting(m -> m.get("data").get("n").asInt())
        .containsExactly(1, 2);
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
  void exitCodesTellRefusedFromUnreachableFromMisused() {
    Run badJson = run("", "push", url(), "cli-bad", "{not json");
    assertThat(badJson.exit()).as("bad usage: nothing was sent").isEqualTo(2);
    assertThat(badJson.err()).contains("DATA argument 1 is not JSON");

    Run unreachable = run("", "queues", "--url=http://127.0.0.1:1", "--request-timeout=2");
    assertThat(unreachable.exit()).isEqualTo(3);

    assertThat(run("", "pop").exit()).as("missing queue").isEqualTo(2);
    // each was sent, or failed past the broker, and exited 1 or with an overflow's message
    Run status = run("", "ack", url(), "--partition-id", "p", "--transaction-id", "t", "-s", "x");
    assertThat(status.exit()).isEqualTo(2);
    assertThat(status.err()).contains("--status must be");
    assertThat(run("", "tail", url(), "cli-idle", "--idle", "0").exit()).isEqualTo(2);
    Run seek = run("", "groups", "seek", url(), "g", "q", "--to", "yesterday");
    assertThat(seek.exit()).isEqualTo(2);
    assertThat(seek.err())
        .contains("'yesterday' is not an ISO-8601 instant")
        .doesNotContain("java.");
    assertThat(run("", "queues", url(), "--request-timeout=0").exit()).isEqualTo(2);
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
  void everyCommandAtEveryDepthAnswersHelpAndTheVersionItLists() {
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
      if (help.out().contains("--version")) {
        args.set(args.size() - 1, "--version");
        Run version = run("", args.toArray(String[]::new));
        assertThat(version.exit()).as("queen %s", args).isZero();
        assertThat(version.out()).as("queen %s", args).startsWith("queen ");
      }
      checked++;
    }
    assertThat(checked).as("commands checked").isGreaterThan(30);
  }
}
