package queen.cli;

import static queen.cli.ClientCommands.EXIT_CODES;
import static queen.cli.ClientCommands.out;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;
import queen.client.DeadLetter;
import queen.client.Queen;

/** The subcommands that print a broker's queues and a queue's dead letters. */
final class QueueCommands {
  private QueueCommands() {}

  @Command(
      name = "queues",
      mixinStandardHelpOptions = true,
      description = "List queues with their partitions and queue-mode message counts.",
      footer = {"", EXIT_CODES})
  static final class Queues extends Listing {
    @Override
    JsonNode fetch(Queen queen) {
      return queen.admin().queues();
    }

    @Override
    Table table(JsonNode body) {
      Table t = new Table("QUEUE", "NAMESPACE", "TASK", "PARTITIONS", "TOTAL", "PENDING", "LEASED");
      for (JsonNode q : body.path("queues")) {
        JsonNode m = q.path("messages");
        t.row(
            q.path("name").asText(),
            q.path("namespace").asText(),
            q.path("task").asText(),
            q.path("partitions").asText(),
            m.path("total").asText(),
            m.path("pending").asText(),
            m.path("processing").asText());
      }
      return t;
    }
  }

  @Command(
      name = "dlq",
      mixinStandardHelpOptions = true,
      description = {
        "Print a queue's dead letters, newest first, one JSON object per line.",
        "--retry puts each printed one back on its partition as a new message."
      },
      footer = {"", EXIT_CODES})
  static final class Dlq implements Callable<Integer> {
    @Mixin ClientOptions client;
    @Spec CommandSpec spec;

    @Parameters(index = "0", description = "queue")
    String queue;

    @Option(
        names = {"-g", "--group"},
        description = "only this consumer group's")
    String group;

    @Option(
        names = {"-p", "--partition"},
        description = "only this partition's")
    String partition;

    @Option(
        names = {"-n", "--limit"},
        defaultValue = "100",
        description = "at most this many (default ${DEFAULT-VALUE})")
    int limit;

    @Option(names = "--offset", defaultValue = "0", description = "skip this many newest")
    int offset;

    @Option(
        names = "--retry",
        description =
            "requeue each dead letter printed, the page's first failed first (printed in that"
                + " order), so a partition's letters of one page go back in the order they failed")
    boolean retry;

    @Override
    public Integer call() {
      try (Queen queen = client.connect()) {
        var query = queen.queue(queue).dlq(group).limit(limit).offset(offset);
        if (partition != null) {
          query.partition(partition);
        }
        // a requeue takes the message's dead letters of every group: one letter per group of a
        // message is requeued once (a second request found none and ended the command)
        Map<String, String> requeued = new HashMap<>();
        List<DeadLetter> page = query.get();
        // a requeue appends to its partition: listed last failed first, a partition's letters
        // came back in reverse order (within the page: --offset pages go back page by page)
        for (DeadLetter d : retry ? page.reversed() : page) {
          ObjectNode line = Ndjson.deadLetter(d);
          if (retry) {
            String requeuedId =
                requeued.computeIfAbsent(
                    d.partitionId() + "/" + d.transactionId(),
                    k ->
                        queen
                            .admin()
                            .retryDeadLetter(d.partitionId(), d.transactionId())
                            .path("requeuedTransactionId")
                            .asText());
            line.put("requeuedTransactionId", requeuedId);
          }
          Ndjson.print(out(spec), line);
          if (retry && !ClientCommands.written(out(spec))) {
            // `| head -1` requeued the whole page, though one letter was shown
            throw new ClientCommands.OutputFailed(
                "stdout could not be written: dead letter "
                    + d.transactionId()
                    + " was requeued unprinted, and the ones after it were not requeued");
          }
        }
      }
      return 0;
    }
  }
}
