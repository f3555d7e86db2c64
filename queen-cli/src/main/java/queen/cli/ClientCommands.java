package queen.cli;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.PrintWriter;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;
import queen.client.AckResult;
import queen.client.Message;
import queen.client.PushResult;
import queen.client.Queen;
import queen.client.QueueBuilder;

/**
 * The subcommands that talk to a running broker through the Java client. They print NDJSON (one
 * JSON value per line) so that their output pipes into each other and into jq.
 */
final class ClientCommands {
  private ClientCommands() {}

  static final String EXIT_CODES =
      "Exit status: 0 done, 1 the broker refused the request (or an ack was refused),"
          + " 2 bad usage, 3 the broker could not be reached or failed (5xx, or a proxy's"
          + " 408 or 429), 4 the output could not be written (what was not written is not acked;"
          + " dlq --retry stops at the first letter it could not print).";

  /** The most messages one push request of the CLI carries. */
  static final int PUSH_CHUNK = 1000;

  /** Stdout failed (a pipe closed by {@code head}, a full disk): exit status 4. */
  static final class OutputFailed extends RuntimeException {
    OutputFailed(String message) {
      super(message);
    }
  }

  /**
   * Whether what was printed reached stdout. The JVM ignores SIGPIPE and {@code System.out} keeps a
   * failed write to itself, so messages printed nowhere were acked as delivered.
   */
  static boolean written(PrintWriter out) {
    return !out.checkError() && !System.out.checkError();
  }

  /** Options every command that reads from one queue shares. */
  static final class QueueOptions {
    @Option(
        names = {"-p", "--partition"},
        description = "one partition (default: any)")
    String partition;

    @Option(
        names = {"-g", "--group"},
        description = "consumer group (default: queue mode)")
    String group;

    @Option(
        names = {"-b", "--batch"},
        defaultValue = "10",
        description = "messages per pop (default ${DEFAULT-VALUE})")
    int batch;

    QueueBuilder apply(QueueBuilder q) {
      if (partition != null) {
        q.partition(partition);
      }
      if (group != null) {
        q.group(group);
      }
      return q.batch(batch);
    }
  }

  @Command(
      name = "push",
      mixinStandardHelpOptions = true,
      description = {
        "Push messages: each DATA argument is one JSON payload; with none, each line of stdin is.",
        "Prints one result per message: {status, transactionId, messageId, partitionId}."
      },
      footer = {"", EXIT_CODES})
  static final class Push implements Callable<Integer> {
    @Mixin ClientOptions client;
    @Spec CommandSpec spec;

    @Parameters(index = "0", description = "queue")
    String queue;

    @Parameters(index = "1..*", arity = "0..*", paramLabel = "DATA", description = "JSON payloads")
    List<String> data = new ArrayList<>();

    @Option(
        names = {"-p", "--partition"},
        description = "partition (default Default)")
    String partition;

    @Option(
        names = "--transaction-id",
        description = "transaction id of a single message (default: a new UUIDv7)")
    String transactionId;

    @Override
    public Integer call() {
      List<JsonNode> payloads = new ArrayList<>();
      for (int i = 0; i < data.size(); i++) {
        payloads.add(Ndjson.parse(data.get(i), "DATA argument " + (i + 1)));
      }
      if (data.isEmpty() && transactionId != null) {
        payloads.addAll(Ndjson.readStdin());
      }
      if (transactionId != null && payloads.size() != 1) {
        throw new IllegalArgumentException("--transaction-id needs exactly one message");
      }
      try (Queen queen = client.connect()) {
        QueueBuilder q = queen.queue(queue);
        if (partition != null) {
          q.partition(partition);
        }
        if (!payloads.isEmpty()) {
          for (int from = 0; from < payloads.size(); from += PUSH_CHUNK) {
            push(q, payloads.subList(from, Math.min(payloads.size(), from + PUSH_CHUNK)));
          }
        } else if (data.isEmpty()) {
          // stdin pushed as it comes: held whole, a big file took the heap and tail -F | queen
          // push never pushed at all
          int[] pushed = {0};
          try {
            Ndjson.readStdin(
                PUSH_CHUNK,
                chunk -> {
                  push(q, chunk);
                  pushed[0] += chunk.size();
                });
          } catch (RuntimeException e) {
            // a bad line, or a push that failed: what went before is said, then the error
            if (pushed[0] > 0) {
              err(spec).println("queen push: " + pushed[0] + " messages were pushed before this");
            }
            throw e;
          }
        }
      }
      return 0;
    }

    private void push(QueueBuilder q, List<JsonNode> payloads) {
      List<Object> items = new ArrayList<>(payloads.size());
      for (JsonNode payload : payloads) {
        ObjectNode envelope = Ndjson.MAPPER.createObjectNode();
        envelope.set("data", payload);
        if (transactionId != null) {
          envelope.put("transactionId", transactionId);
        }
        items.add(envelope);
      }
      PrintWriter out = out(spec);
      for (PushResult r : q.push(items)) {
        Ndjson.print(out, Ndjson.pushResult(r));
      }
      out.flush();
    }
  }

  @Command(
      name = "pop",
      mixinStandardHelpOptions = true,
      description = {
        "Pop one batch and print its messages, one JSON object per line.",
        "Leased messages must be acked (queen ack reads these lines) or they are delivered",
        "again when the lease ends; --ack acks them as soon as they are printed."
      },
      footer = {"", EXIT_CODES})
  static final class Pop implements Callable<Integer> {
    @Mixin ClientOptions client;
    @Spec CommandSpec spec;
    @Mixin QueueOptions options;

    @Parameters(index = "0", description = "queue")
    String queue;

    @Option(
        names = {"-w", "--wait"},
        defaultValue = "0",
        paramLabel = "SECONDS",
        description = "wait up to this long for messages (default: answer at once)")
    int waitSeconds;

    @Option(names = "--ack", description = "ack the messages once printed")
    boolean ack;

    @Override
    public Integer call() {
      if (waitSeconds < 0) {
        throw new IllegalArgumentException("--wait must not be negative, got " + waitSeconds);
      }
      try (Queen queen = client.connect()) {
        QueueBuilder q =
            options
                .apply(queen.queue(queue))
                .wait(waitSeconds > 0)
                // the broker caps a long-poll's deadline; a day of seconds overflowed an int
                .timeoutMillis((int) Math.min(Integer.MAX_VALUE, waitSeconds * 1000L));
        List<Message> messages = q.pop();
        for (Message m : messages) {
          Ndjson.print(out(spec), Ndjson.message(m));
        }
        out(spec).flush();
        if (!written(out(spec))) {
          throw new OutputFailed(
              "the messages could not be written; none acked, leased ones come again when their"
                  + " lease ends");
        }
        if (ack && !messages.isEmpty()) {
          // refusals only, and on stderr: stdout carries the messages alone
          return refusals(err(spec), queen.ack(messages, true), false) == 0 ? 0 : 1;
        }
      }
      return 0;
    }
  }

  @Command(
      name = "ack",
      mixinStandardHelpOptions = true,
      description = {
        "Ack messages read from stdin (as queen pop prints them) or named by id.",
        "Without --partition-id and --transaction-id, each stdin line is one message.",
        "Prints one result per message: {transactionId, success, error, dlq}."
      },
      footer = {"", EXIT_CODES, "An ack the broker refuses (an expired lease) exits 1."})
  static final class Ack implements Callable<Integer> {
    // "success" is Queen's other name for completed (WIRE.md section 8)
    private static final List<String> STATUSES =
        List.of("completed", "success", "failed", "retry", "dlq");

    @Mixin ClientOptions client;
    @Spec CommandSpec spec;

    @Option(
        names = {"-s", "--status"},
        defaultValue = "completed",
        description = "completed (or success), failed, retry or dlq (default ${DEFAULT-VALUE})")
    String status;

    @Option(
        names = {"-e", "--error"},
        description = "error text kept with a dead letter")
    String error;

    @Option(names = "--partition-id", description = "the message's partitionId")
    String partitionId;

    @Option(names = "--transaction-id", description = "the message's transactionId")
    String transactionId;

    @Option(
        names = "--lease-id",
        description = "the lease it was popped under (with --partition-id only)")
    String leaseId;

    @Option(
        names = {"-g", "--group"},
        description = "consumer group (default: queue mode; with --partition-id only)")
    String group;

    @Override
    public Integer call() {
      if (!STATUSES.contains(status)) {
        // the broker answers an unknown status with success false and no error, per message
        throw new IllegalArgumentException(
            "--status must be completed (or success), failed, retry or dlq, got " + status);
      }
      List<Message> messages = new ArrayList<>();
      if (partitionId != null || transactionId != null) {
        if (partitionId == null || transactionId == null) {
          throw new IllegalArgumentException("--partition-id and --transaction-id go together");
        }
        ObjectNode n = Ndjson.MAPPER.createObjectNode();
        n.put("transactionId", transactionId);
        n.put("partitionId", partitionId);
        n.put("leaseId", leaseId == null ? "" : leaseId);
        n.put("consumerGroup", group == null ? Queen.QUEUE_MODE : group);
        messages.add(Message.fromJson(n));
      } else {
        if (leaseId != null || group != null) {
          // a popped message read from stdin names its own lease and group
          throw new IllegalArgumentException(
              "-g and --lease-id go with --partition-id and --transaction-id; messages read"
                  + " from stdin carry their own");
        }
        for (JsonNode n : Ndjson.readStdin()) {
          messages.add(Ndjson.readMessage(n));
        }
      }
      if (messages.isEmpty()) {
        return 0;
      }
      try (Queen queen = client.connect()) {
        return refusals(out(spec), queen.ack(messages, status, error), true) == 0 ? 0 : 1;
      }
    }
  }

  static PrintWriter out(CommandSpec spec) {
    return spec.commandLine().getOut();
  }

  static PrintWriter err(CommandSpec spec) {
    return spec.commandLine().getErr();
  }

  /** Prints each ack result ({@code all}) or the refused ones; answers how many were refused. */
  static int refusals(PrintWriter out, List<AckResult> results, boolean all) {
    int refused = 0;
    for (AckResult r : results) {
      if (!all && r.success()) {
        continue;
      }
      ObjectNode n = Ndjson.MAPPER.createObjectNode();
      n.put("transactionId", r.transactionId());
      n.put("success", r.success());
      n.put("error", r.error());
      n.put("dlq", r.dlq());
      Ndjson.print(out, n);
      if (!r.success()) {
        refused++;
      }
    }
    return refused;
  }
}
