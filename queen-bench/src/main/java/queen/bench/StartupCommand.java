package queen.bench;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.TimeUnit;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * {@code queen bench startup}: starts the broker with a shell command on a database of its own
 * (created when missing), again and again, and times each start until {@code /health} answers 200
 * and until a first pop is served; median and max. The first start (unmeasured) migrates the
 * database, records the launcher's AOT cache when it makes one, and leaves one message per run to
 * pop.
 */
@Command(
    name = "startup",
    description =
        "Start to healthy and start to first pop served, of a broker started again and again on a"
            + " migrated database (median and max).")
final class StartupCommand implements Callable<Integer> {
  @Option(names = "--runs", defaultValue = "10")
  int runs;

  @Option(
      names = "--command",
      defaultValue = "./queen serve",
      description = "How to start the broker (run by bash; default '${DEFAULT-VALUE}').")
  String command;

  @Option(names = "--port", defaultValue = "6653")
  int port;

  @Option(names = "--database", defaultValue = "queen_bench_startup")
  String database;

  private final HttpClient http =
      HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build();

  @Override
  public Integer call() throws Exception {
    // PG_HOST, PG_PORT, PG_USER and PG_PASSWORD as the broker reads them
    BenchOptions server = new BenchOptions();
    server.pool = 1;
    server.createIfMissing(database);
    Path buffer = Files.createTempDirectory("queen-bench-startup");
    String base = "http://127.0.0.1:" + port;
    Process first = start(buffer);
    Launched.awaitHealthy(http, first, base);
    for (int i = 0; i < runs; i++) {
      send(
          HttpRequest.newBuilder(URI.create(base + "/api/v1/push"))
              .header("Content-Type", "application/json")
              .POST(
                  HttpRequest.BodyPublishers.ofString(
                      "{\"items\":[{\"queue\":\"bench-startup\",\"payload\":{\"run\":"
                          + i
                          + "}}]}"))
              .build());
    }
    Launched.stop(first);
    List<Long> healthy = new ArrayList<>();
    List<Long> popped = new ArrayList<>();
    for (int i = 0; i < runs; i++) {
      long t0 = System.nanoTime();
      Process p = start(buffer);
      Launched.awaitHealthy(http, p, base);
      long t1 = System.nanoTime();
      int status =
          send(
              HttpRequest.newBuilder(
                      URI.create(base + "/api/v1/pop/queue/bench-startup?autoAck=true&batch=1"))
                  .build());
      long t2 = System.nanoTime();
      Launched.stop(p);
      if (status != 200) {
        throw new IllegalStateException("the first pop answered " + status);
      }
      healthy.add(TimeUnit.NANOSECONDS.toMillis(t1 - t0));
      popped.add(TimeUnit.NANOSECONDS.toMillis(t2 - t0));
    }
    System.out.printf(
        "startup  %d runs of '%s': to healthy median %d ms, max %d ms; to first pop median %d ms,"
            + " max %d ms; each %s%n",
        runs, command, median(healthy), max(healthy), median(popped), max(popped), healthy);
    return 0;
  }

  private Process start(Path buffer) throws IOException {
    return Launched.start(
        command,
        port,
        database,
        buffer,
        ProcessBuilder.Redirect.to(Path.of("bench-startup.log").toFile()));
  }

  private int send(HttpRequest r) throws IOException, InterruptedException {
    return http.send(r, HttpResponse.BodyHandlers.discarding()).statusCode();
  }

  private static long median(List<Long> xs) {
    List<Long> s = xs.stream().sorted().toList();
    return s.get(s.size() / 2);
  }

  private static long max(List<Long> xs) {
    return xs.stream().mapToLong(Long::longValue).max().orElse(0);
  }
}
