package queen.cli;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.PrintWriter;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;
import queen.client.Queen;

/**
 * {@code queen stats}: the per-minute analytics series, one JSON object per minute and queue or
 * broker, so that they can be piped into jq or a spreadsheet.
 */
@Command(
    name = "stats",
    mixinStandardHelpOptions = true,
    description = {
      "Print a per-minute analytics series, one JSON object per line: each point carries the"
          + " queue and/or broker it belongs to. postgres-stats prints one object, read live;"
          + " throughput prints pushed, popped, acked, failed, dead-lettered and lag per"
          + " --interval."
    },
    footer = {"", ClientCommands.EXIT_CODES})
final class StatsCommand implements Callable<Integer> {
  /** The nested lists of the analytics answers, outermost first; points are the leaves. */
  private static final List<String> LEVELS = List.of("queues", "replicas", "points", "dataPoints");

  @Mixin ClientOptions client;
  @Spec CommandSpec spec;

  private static final List<String> SERIES =
      List.of(
          "queue-ops",
          "queue-lag",
          "retention",
          "queue-parked-replicas",
          "system-metrics",
          "worker-metrics",
          "postgres-stats",
          "throughput");

  @Parameters(
      index = "0",
      paramLabel = "SERIES",
      description =
          "queue-ops, queue-lag, retention, queue-parked-replicas, system-metrics,"
              + " worker-metrics, postgres-stats or throughput")
  String series;

  @Option(
      names = {"-q", "--queue"},
      description = "only this queue (not for system-metrics, worker-metrics, postgres-stats)")
  String queue;

  @Option(
      names = "--from",
      description = "first minute (ISO-8601; default an hour ago, for throughput a day ago)")
  String from;

  @Option(names = "--to", description = "last minute (ISO-8601; default now)")
  String to;

  @Option(names = "--hostname", description = "only the brokers on this host")
  String hostname;

  @Option(names = "--worker-id", description = "only this broker (hostname:port)")
  String workerId;

  @Option(names = "--interval", description = "throughput's bucket: minute, hour (default) or day")
  String interval;

  @Override
  public Integer call() {
    Map<String, String> q = new LinkedHashMap<>();
    ClientOptions.putIfSet(q, "queue", queue);
    ClientOptions.putIfSet(q, "from", from);
    ClientOptions.putIfSet(q, "to", to);
    ClientOptions.putIfSet(q, "hostname", hostname);
    ClientOptions.putIfSet(q, "workerId", workerId);
    ClientOptions.putIfSet(q, "interval", interval);
    if (!SERIES.contains(series)) {
      throw new ParameterException(spec.commandLine(), "Unknown SERIES '" + series + "'");
    }
    boolean throughput = series.equals("throughput");
    if (interval != null && !throughput) {
      throw new ParameterException(spec.commandLine(), "--interval is for throughput only");
    }
    if (throughput && (hostname != null || workerId != null)) {
      throw new ParameterException(
          spec.commandLine(), "throughput is per queue: --hostname and --worker-id do not apply");
    }
    try (Queen queen = client.connect()) {
      JsonNode body =
          throughput ? queen.admin().analytics(q) : queen.admin().analyticsSeries(series, q);
      PrintWriter out = ClientCommands.out(spec);
      if (series.equals("postgres-stats")) {
        Ndjson.print(out, body);
      } else {
        flatten(out, body, Ndjson.MAPPER.createObjectNode(), true);
      }
    }
    return 0;
  }

  /**
   * Prints each leaf of the nested lists with the plain fields of the entries above it (the
   * answer's own window fields are left out: every line would repeat them).
   */
  private static void flatten(PrintWriter out, JsonNode node, ObjectNode above, boolean top) {
    ObjectNode here = above.deepCopy();
    if (!top) {
      node.properties()
          .forEach(
              e -> {
                if (e.getValue().isValueNode()) {
                  here.set(e.getKey(), e.getValue());
                }
              });
    }
    for (String level : LEVELS) {
      if (node.path(level).isArray()) {
        for (JsonNode child : node.path(level)) {
          flatten(out, child, here, false);
        }
        return;
      }
    }
    if (!top) {
      Ndjson.print(out, here);
    }
  }
}
