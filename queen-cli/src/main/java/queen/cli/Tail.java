package queen.cli;

import static queen.cli.ClientCommands.EXIT_CODES;
import static queen.cli.ClientCommands.err;
import static queen.cli.ClientCommands.out;
import static queen.cli.ClientCommands.refusals;
import static queen.cli.ClientCommands.written;

import java.io.PrintWriter;
import java.time.Instant;
import java.time.format.DateTimeParseException;
import java.util.concurrent.Callable;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;
import queen.client.Consumer;
import queen.client.Message;
import queen.client.Queen;
import queen.client.QueueBuilder;

/**
 * {@code queen tail}: consumes a queue and prints each message, acking only what reached stdout
 * (its own class: the consumer, the stop on a failed write and the exit status are its concept).
 */
@Command(
    name = "tail",
    mixinStandardHelpOptions = true,
    description = {
      "Consume a queue and print each message as one JSON line, acking it once printed.",
      "Runs until Ctrl-C, --limit or --idle."
    },
    footer = {"", EXIT_CODES})
final class Tail implements Callable<Integer> {
  @Mixin ClientOptions client;
  @Spec CommandSpec spec;
  @Mixin ClientCommands.QueueOptions options;

  @Parameters(index = "0", description = "queue")
  String queue;

  @Option(
      names = {"-n", "--limit"},
      description = "stop after this many messages")
  Long limit;

  @Option(
      names = "--idle",
      paramLabel = "SECONDS",
      description = "stop after this long without a message")
  Long idleSeconds;

  @Option(
      names = "--from",
      description = "where a new group starts: 'now' or an ISO-8601 instant (default: oldest)")
  String from;

  @Override
  public Integer call() throws InterruptedException {
    try (Queen queen = client.connect()) {
      QueueBuilder q = options.apply(queen.queue(queue)).timeoutMillis(10_000);
      if (limit != null) {
        q.limit(limit);
      }
      if (idleSeconds != null) {
        if (idleSeconds < 1) {
          throw new IllegalArgumentException(
              "--idle must be at least 1 second, got " + idleSeconds);
        }
        // beyond what milliseconds hold is for ever
        q.idleMillis(Math.min(idleSeconds, Long.MAX_VALUE / 1000) * 1000);
      }
      if (from != null) {
        q.subscriptionFrom(instantOrNow(from));
      }
      PrintWriter out = out(spec);
      AtomicBoolean outputFailed = new AtomicBoolean();
      AtomicInteger refused = new AtomicInteger();
      AtomicReference<Consumer> running = new AtomicReference<>();
      // acked here, once written: a message the consumer acked was printed nowhere when stdout
      // had failed
      Consumer consumer =
          q.autoAck(false)
              .consume(
                  batch -> {
                    synchronized (out) {
                      if (outputFailed.get()) {
                        return; // left leased: delivered again when the lease ends
                      }
                      for (Message m : batch) {
                        Ndjson.print(out, Ndjson.message(m));
                      }
                      out.flush();
                      if (!written(out)) {
                        outputFailed.set(true);
                        Consumer c = running.get();
                        if (c != null) {
                          c.stop(); // else the main thread stops it once it has it
                        }
                        return;
                      }
                    }
                    refused.addAndGet(refusals(err(spec), queen.ack(batch, true), false));
                  });
      running.set(consumer);
      if (outputFailed.get()) {
        consumer.stop(); // failed before the handler could reach the consumer
      }
      Thread stopper = new Thread(consumer::stop, "queen-tail-stop");
      Runtime.getRuntime().addShutdownHook(stopper);
      consumer.await();
      try {
        Runtime.getRuntime().removeShutdownHook(stopper);
      } catch (IllegalStateException shuttingDown) {
        // Ctrl-C: the hook is running, and stopped the consumer
      }
      if (outputFailed.get()) {
        throw new ClientCommands.OutputFailed(
            "the messages could not be written; the unwritten were not acked");
      }
      return refused.get() == 0 ? 0 : 1;
    }
  }

  private static String instantOrNow(String from) {
    if (!from.equals("now")) {
      try {
        Instant.parse(from);
      } catch (DateTimeParseException e) {
        throw new IllegalArgumentException(
            "--from must be 'now' or an ISO-8601 instant such as 2026-12-01T00:00:00Z, got '"
                + from
                + "'");
      }
    }
    return from;
  }
}
