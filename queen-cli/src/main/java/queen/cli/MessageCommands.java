package queen.cli;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.Callable;
import picocli.CommandLine.ArgGroup;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;
import queen.client.Queen;

/** {@code queen messages}, {@code queen message} and {@code queen traces}: browsing the log. */
final class MessageCommands {
  private MessageCommands() {}

  @Command(
      name = "messages",
      mixinStandardHelpOptions = true,
      description = "List messages newest first, without payloads, one JSON object per line.",
      footer = {"", ClientCommands.EXIT_CODES})
  static final class Messages implements Callable<Integer> {
    @Mixin ClientOptions client;
    @Spec CommandSpec spec;

    @Parameters(index = "0", arity = "0..1", description = "queue (default: every queue)")
    String queue;

    @Option(
        names = {"-p", "--partition"},
        description = "only this partition")
    String partition;

    @Option(
        names = "--status",
        description =
            "pending, processing, completed or dead_letter (failed: dead_letter): queue mode's"
                + " status, or the slowest group's where only groups read the partition")
    String status;

    @Option(
        names = "--from",
        description = "created at or after (ISO-8601; default an hour before --to)")
    String from;

    @Option(names = "--to", description = "created at or before (ISO-8601; default now)")
    String to;

    @Option(
        names = {"-n", "--limit"},
        defaultValue = "200",
        description = "at most this many (default ${DEFAULT-VALUE})")
    int limit;

    @Override
    public Integer call() {
      Map<String, String> q = new LinkedHashMap<>();
      ClientOptions.putIfSet(q, "queue", queue);
      ClientOptions.putIfSet(q, "partition", partition);
      ClientOptions.putIfSet(q, "status", status);
      ClientOptions.putIfSet(q, "from", from);
      ClientOptions.putIfSet(q, "to", to);
      q.put("limit", Integer.toString(limit));
      try (Queen queen = client.connect()) {
        for (JsonNode m : queen.admin().messages(q).path("messages")) {
          Ndjson.print(ClientCommands.out(spec), m);
        }
      }
      return 0;
    }
  }

  @Command(
      name = "message",
      mixinStandardHelpOptions = true,
      description = {
        "Print one message: payload, status per consumer group, traces.",
        "With --delete, delete it instead: no group receives it again.",
        "With --dead-letter, move it to the dead letters of the groups that have not consumed it."
      },
      footer = {"", ClientCommands.EXIT_CODES})
  static final class OneMessage implements Callable<Integer> {
    @Mixin ClientOptions client;
    @Spec CommandSpec spec;

    @Parameters(index = "0", description = "partition id (a UUID)")
    String partitionId;

    @Parameters(index = "1", description = "transaction id")
    String transactionId;

    @ArgGroup(exclusive = true)
    Action action;

    static final class Action {
      @Option(names = "--delete", description = "delete the message")
      boolean delete;

      @Option(
          names = "--dead-letter",
          description = "move the message to the dead letters of the groups still before it")
      boolean deadLetter;
    }

    @Override
    public Integer call() {
      try (Queen queen = client.connect()) {
        Ndjson.print(
            ClientCommands.out(spec),
            action == null
                ? queen.admin().message(partitionId, transactionId)
                : action.delete
                    ? queen.admin().deleteMessage(partitionId, transactionId)
                    : queen.admin().moveToDeadLetters(partitionId, transactionId));
      }
      return 0;
    }
  }

  @Command(
      name = "traces",
      mixinStandardHelpOptions = true,
      description = {
        "Print traces, one JSON object per line.",
        "Those of one message (PARTITION_ID TRANSACTION_ID), those carrying a name (--name),",
        "or the names used last (no arguments)."
      },
      footer = {"", ClientCommands.EXIT_CODES})
  static final class Traces implements Callable<Integer> {
    @Mixin ClientOptions client;
    @Spec CommandSpec spec;

    @Parameters(arity = "0..2", description = "partition id and transaction id of one message")
    String[] message;

    @Option(names = "--name", description = "traces carrying this name, newest first")
    String name;

    @Option(
        names = {"-n", "--limit"},
        defaultValue = "100",
        description =
            "at most this many traces by --name, or names (default ${DEFAULT-VALUE}; at most 1000)")
    int limit;

    @Override
    public Integer call() {
      try (Queen queen = client.connect()) {
        JsonNode lines;
        if (message != null && name != null) {
          // the message's traces were printed, all of them, the name ignored
          throw new ParameterException(spec.commandLine(), "name a message or --name, not both");
        }
        if (message != null && message.length == 2) {
          lines = queen.admin().traces(message[0], message[1]).path("traces");
        } else if (message != null) {
          throw new ParameterException(
              spec.commandLine(), "a message is named by its partition id and transaction id");
        } else if (name != null) {
          lines = queen.admin().tracesByName(name, limit, 0).path("traces");
        } else {
          lines = queen.admin().traceNames(limit, 0).path("trace_names");
        }
        for (JsonNode t : lines) {
          Ndjson.print(ClientCommands.out(spec), t);
        }
      }
      return 0;
    }
  }
}
