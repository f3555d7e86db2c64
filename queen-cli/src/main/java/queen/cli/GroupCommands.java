package queen.cli;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.time.Instant;
import java.util.HashSet;
import java.util.Iterator;
import java.util.Map;
import java.util.Set;
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

/**
 * {@code queen groups}: list consumer groups, and reset one (delete its cursors, seek it to a time
 * or to the end, move its subscription start).
 */
@Command(
    name = "groups",
    mixinStandardHelpOptions = true,
    description = {
      "List consumer groups per queue with their lag.",
      "Subcommands show, lagging, delete, seek and subscription inspect and reset one group."
    },
    subcommands = {
      GroupCommands.Show.class,
      GroupCommands.Lagging.class,
      GroupCommands.Delete.class,
      GroupCommands.Seek.class,
      GroupCommands.Subscription.class
    },
    footer = {"", ClientCommands.EXIT_CODES})
final class GroupCommands extends Listing {
  @Override
  JsonNode fetch(Queen queen) {
    return queen.admin().consumerGroups();
  }

  @Override
  Table table(JsonNode body) {
    Table t = new Table("GROUP", "QUEUE", "PARTITIONS", "LAGGING", "LAG", "MAX_LAG_S", "STATE");
    for (JsonNode g : body) {
      t.row(
          g.path("name").asText(),
          g.path("queueName").asText(),
          g.path("members").asText(),
          g.path("partitionsWithLag").asText(),
          g.path("totalLag").asText(),
          g.path("maxTimeLag").asText(),
          g.path("state").asText());
    }
    return t;
  }

  @Command(
      name = "show",
      mixinStandardHelpOptions = true,
      description = "One group's cursors: per queue and partition, lag and lease.",
      footer = {"", ClientCommands.EXIT_CODES})
  static final class Show extends Listing {
    private static final int PAGE = 10_000;

    @Parameters(index = "0", description = "consumer group")
    String group;

    @Override
    JsonNode fetch(Queen queen) {
      // every page: the broker answers at most PAGE cursors at a time
      ObjectNode all = Ndjson.MAPPER.createObjectNode();
      Set<String> seen = new HashSet<>();
      for (int offset = 0; ; offset += PAGE) {
        JsonNode page =
            queen
                .admin()
                .consumerGroup(
                    group,
                    Map.of("limit", Integer.toString(PAGE), "offset", Integer.toString(offset)));
        int n = 0;
        for (Iterator<Map.Entry<String, JsonNode>> it = page.fields(); it.hasNext(); ) {
          Map.Entry<String, JsonNode> queue = it.next();
          ArrayNode into =
              all.has(queue.getKey())
                  ? (ArrayNode) all.get(queue.getKey()).get("partitions")
                  : all.putObject(queue.getKey()).putArray("partitions");
          for (JsonNode c : queue.getValue().path("partitions")) {
            if (!seen.add(queue.getKey() + "/" + c.path("partitionId").asText())) {
              // a broker that does not page (Queen MQ) answered its cursors again, in any order:
              // the repeated page's first cursor, so nothing of that page was added
              return all;
            }
            into.add(c);
            n++;
          }
        }
        // a short page is the last; a longer one, every cursor of a broker that does not page
        if (n != PAGE) {
          return all;
        }
      }
    }

    @Override
    Table table(JsonNode body) {
      Table t = new Table("QUEUE", "PARTITION", "COMMITTED", "LAG", "LAG_S", "CONSUMED", "LEASED");
      for (Iterator<Map.Entry<String, JsonNode>> it = body.fields(); it.hasNext(); ) {
        Map.Entry<String, JsonNode> queue = it.next();
        for (JsonNode c : queue.getValue().path("partitions")) {
          t.row(
              queue.getKey(),
              c.path("partition").asText(),
              c.path("committedOffset").asText(),
              c.path("offsetLag").asText(),
              c.path("timeLagSeconds").asText(),
              c.path("totalConsumed").asText(),
              c.path("leaseActive").asText());
        }
      }
      return t;
    }
  }

  @Command(
      name = "lagging",
      mixinStandardHelpOptions = true,
      description = "Cursors whose oldest unconsumed message is older than --min-lag.",
      footer = {"", ClientCommands.EXIT_CODES})
  static final class Lagging extends Listing {
    @Option(
        names = "--min-lag",
        defaultValue = "60",
        paramLabel = "SECONDS",
        description = "at least this far behind (default ${DEFAULT-VALUE})")
    int minLag;

    @Override
    JsonNode fetch(Queen queen) {
      return queen.admin().laggingConsumerGroups(minLag);
    }

    @Override
    Table table(JsonNode body) {
      Table t = new Table("GROUP", "QUEUE", "PARTITION", "LAG", "LAG_S", "OLDEST_UNCONSUMED");
      for (JsonNode l : body) {
        t.row(
            l.path("consumer_group").asText(),
            l.path("queue_name").asText(),
            l.path("partition_name").asText(),
            l.path("offset_lag").asText(),
            l.path("time_lag_seconds").asText(),
            l.path("oldest_unconsumed_at").asText());
      }
      return t;
    }
  }

  /** A command that changes one group and prints the broker's answer as one JSON line. */
  abstract static class Change implements Callable<Integer> {
    @Mixin ClientOptions client;
    @Spec CommandSpec spec;

    @Parameters(index = "0", description = "consumer group")
    String group;

    abstract JsonNode apply(Queen queen);

    /** The exit status for the broker's answer: 0 unless the change did not take. */
    int outcome(JsonNode answer) {
      return 0;
    }

    @Override
    public Integer call() {
      try (Queen queen = client.connect()) {
        JsonNode answer = apply(queen);
        Ndjson.print(ClientCommands.out(spec), answer);
        return outcome(answer);
      }
    }
  }

  @Command(
      name = "delete",
      mixinStandardHelpOptions = true,
      description = {
        "Delete a group's cursors (on every queue, or on --queue) and leases.",
        "Its next consume starts over from its subscription."
      },
      footer = {"", ClientCommands.EXIT_CODES})
  static final class Delete extends Change {
    @Option(
        names = {"-q", "--queue"},
        description = "only on this queue")
    String queue;

    @Option(names = "--keep-subscription", description = "keep the subscription record")
    boolean keepSubscription;

    @Override
    JsonNode apply(Queen queen) {
      return queue == null
          ? queen.admin().deleteConsumerGroup(group, !keepSubscription)
          : queen.admin().deleteConsumerGroup(group, queue, !keepSubscription);
    }
  }

  @Command(
      name = "seek",
      mixinStandardHelpOptions = true,
      description = {
        "Move a group's cursors on a queue, releasing its live leases.",
        "--to-end skips the backlog; --to TIME delivers again every message created at or after"
            + " TIME."
      },
      footer = {"", ClientCommands.EXIT_CODES})
  static final class Seek extends Change {
    @Parameters(index = "1", description = "queue")
    String queue;

    @ArgGroup(multiplicity = "1")
    Target target;

    static final class Target {
      @Option(names = "--to-end", required = true, description = "to the newest message")
      boolean toEnd;

      @Option(
          names = "--to",
          required = true,
          paramLabel = "TIME",
          description = "to an ISO-8601 instant, e.g. 2026-12-01T09:00:00Z")
      Instant to;
    }

    @Option(
        names = {"-p", "--partition"},
        description = "only this partition (with --to-end)")
    String partition;

    @Override
    JsonNode apply(Queen queen) {
      if (partition != null) {
        if (!target.toEnd) {
          throw new ParameterException(
              spec.commandLine(), "--partition seeks to the end only: use it with --to-end");
        }
        return queen.admin().seekPartitionToEnd(group, queue, partition);
      }
      return target.toEnd
          ? queen.admin().seekToEnd(group, queue)
          : queen.admin().seek(group, queue, target.to);
    }
  }

  @Command(
      name = "subscription",
      mixinStandardHelpOptions = true,
      description = "Set where the group's new cursors start; existing cursors stay.",
      footer = {"", ClientCommands.EXIT_CODES})
  static final class Subscription extends Change {
    @Parameters(index = "1", paramLabel = "TIME", description = "an ISO-8601 instant")
    Instant from;

    @Override
    JsonNode apply(Queen queen) {
      return queen.admin().updateSubscription(group, from);
    }

    // the broker answers success for a group that never consumed, and its first consume then
    // read the whole backlog: a start that silently did not take
    @Override
    int outcome(JsonNode answer) {
      if (answer.path("rowsUpdated").asLong(1) != 0) {
        return 0;
      }
      ClientCommands.err(spec)
          .println(
              "queen groups subscription: group "
                  + group
                  + " has no subscription record (it has not consumed since it was created"
                  + " or deleted), so nothing changed;"
                  + " to start it at a time, seek it on each queue: queen groups seek "
                  + group
                  + " QUEUE --to TIME");
      return 1;
    }
  }
}
