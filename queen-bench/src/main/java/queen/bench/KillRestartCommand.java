package queen.bench;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.Callable;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/**
 * {@code queen bench kill-restart}: producers push (20 of them, batches of 10, as queen-push) for a
 * fixed time while the broker is killed with SIGKILL and started again some times, next to the same
 * run without kills. A push that fails is sent again with the same transactionIds until it is
 * answered, as Queen's clients do; at the end the database must hold exactly the acknowledged
 * messages, each once.
 */
@Command(
    name = "kill-restart",
    description =
        "Pushes during SIGKILLs and restarts of the broker, against the same run without kills;"
            + " checks that every acknowledged message is stored once.")
final class KillRestartCommand implements Callable<Integer> {
  @Mixin BenchOptions options;

  @Option(names = "--kills", defaultValue = "4")
  int kills;

  @Option(names = "--producers", defaultValue = "20")
  int producers;

  @Option(
      names = "--command",
      defaultValue = "./queen serve",
      description = "How to start the broker (run by bash; default '${DEFAULT-VALUE}').")
  String command;

  @Option(names = "--port", defaultValue = "6654")
  int port;

  private final HttpClient http =
      HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(1)).build();

  @Override
  public Integer call() throws Exception {
    // a first start, unmeasured: it records the launcher's AOT cache when it makes one
    options.recreate("queen_bench_kill_calm");
    Path buffer = Files.createTempDirectory("queen-bench-kill");
    Process first = start("queen_bench_kill_calm", buffer);
    Launched.awaitHealthy(http, first, "http://127.0.0.1:" + port);
    Launched.stop(first);
    // calm runs before and after: the machine drifts (the first start's cache is still being
    // written when the first run begins), so the kills are compared with both
    long before = run("calm", 0);
    long killed = run("killed", kills);
    long after = run("calm", 0);
    double calm = (before + after) / 2.0;
    System.out.printf(
        "kill-restart  %d s, %d producers: %,d messages with %d kills against %,d and %,d without"
            + " (%.2fx of their mean)%n",
        options.seconds, producers, killed, kills, before, after, killed / calm);
    return 0;
  }

  /** One run on a fresh database; the acknowledged messages, checked against the database. */
  private long run(String label, int killCount) throws Exception {
    String database = "queen_bench_kill_" + label;
    options.recreate(database);
    Path buffer = Files.createTempDirectory("queen-bench-kill");
    String base = "http://127.0.0.1:" + port;
    AtomicReference<Process> broker = new AtomicReference<>(start(database, buffer));
    Launched.awaitHealthy(http, broker.get(), base);
    Set<String> acked = ConcurrentHashMap.newKeySet();
    AtomicLong batches = new AtomicLong();
    long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(options.seconds);
    List<Long> downtimes = new ArrayList<>();
    try (ExecutorService pool = Executors.newVirtualThreadPerTaskExecutor()) {
      for (int p = 0; p < producers; p++) {
        int producer = p;
        pool.submit(() -> produce(base, producer, end, acked, batches));
      }
      for (int k = 1; k <= killCount; k++) {
        long at = TimeUnit.SECONDS.toNanos(options.seconds) * k / (killCount + 1);
        Thread.sleep(Math.max(0, TimeUnit.NANOSECONDS.toMillis(at - elapsed(end))));
        long t0 = System.nanoTime();
        broker.get().destroyForcibly().waitFor();
        broker.set(start(database, buffer));
        Launched.awaitHealthy(http, broker.get(), base);
        downtimes.add(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0));
      }
    }
    long stored = storedMessages();
    Launched.stop(broker.get());
    System.out.printf(
        "%-7s %,d messages acknowledged in %d s, %,d stored; kill to healthy: %s ms%n",
        label, acked.size(), options.seconds, stored, downtimes);
    if (stored != acked.size()) {
      throw new IllegalStateException(
          "stored " + stored + " messages but " + acked.size() + " were acknowledged");
    }
    return acked.size();
  }

  private long elapsed(long end) {
    return System.nanoTime() - (end - TimeUnit.SECONDS.toNanos(options.seconds));
  }

  /** Pushes batches until the end; a failed batch is sent again, unchanged, until answered. */
  private void produce(String base, int producer, long end, Set<String> acked, AtomicLong batches) {
    while (System.nanoTime() < end) {
      long n = batches.incrementAndGet();
      StringBuilder body = new StringBuilder("{\"items\":[");
      List<String> txns = new ArrayList<>();
      for (int i = 0; i < 10; i++) {
        String txn = "k-" + producer + "-" + n + "-" + i;
        txns.add(txn);
        body.append(i == 0 ? "" : ",")
            .append("{\"queue\":\"bench-kill\",\"partition\":\"p")
            .append((n + i) % 50)
            .append("\",\"transactionId\":\"")
            .append(txn)
            .append("\",\"payload\":{\"n\":")
            .append(n)
            .append("}}");
      }
      HttpRequest push =
          HttpRequest.newBuilder(URI.create(base + "/api/v1/push"))
              .timeout(Duration.ofSeconds(10))
              .header("Content-Type", "application/json")
              .POST(HttpRequest.BodyPublishers.ofString(body.append("]}").toString()))
              .build();
      while (true) {
        try {
          int status = http.send(push, HttpResponse.BodyHandlers.discarding()).statusCode();
          if (status == 200 || status == 201) {
            acked.addAll(txns);
            break;
          }
        } catch (IOException down) {
          // the broker is being restarted: send the same batch again
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
          return;
        }
        try {
          Thread.sleep(20); // a client's retry pause, not synchronisation
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
          return;
        }
      }
    }
  }

  private long storedMessages() throws Exception {
    try (Jdbc db = options.jdbc();
        Connection c = db.connection();
        Statement st = c.createStatement();
        ResultSet rs =
            st.executeQuery(
                "select coalesce(sum(p.last_offset + 1), 0) from queen.log_partitions p"
                    + " join queen.queues q on q.id = p.queue_id where q.name = 'bench-kill'")) {
      rs.next();
      return rs.getLong(1);
    }
  }

  private Process start(String database, Path buffer) throws IOException {
    return Launched.start(
        command,
        port,
        database,
        buffer,
        ProcessBuilder.Redirect.appendTo(Path.of("bench-kill.log").toFile()));
  }
}
