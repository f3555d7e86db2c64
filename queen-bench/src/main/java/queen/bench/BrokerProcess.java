package queen.bench;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * A broker in its own process, so that its memory can be read and its CPU is not the load
 * generator's: started from the same installation as the bench, on its own database and port.
 */
final class BrokerProcess implements AutoCloseable {
  private final Process process;
  final String url;

  private BrokerProcess(Process process, String url) {
    this.process = process;
    this.url = url;
  }

  static BrokerProcess start(String mainClass, int port, String database, Path log)
      throws Exception {
    return start(mainClass, port, database, log, Map.of());
  }

  /** As {@link #start(String, int, String, Path)}, with more of the broker's environment. */
  static BrokerProcess start(
      String mainClass, int port, String database, Path log, Map<String, String> extraEnv)
      throws Exception {
    String java = ProcessHandle.current().info().command().orElse("java");
    List<String> cmd = new ArrayList<>();
    cmd.add(java);
    cmd.add("-XX:+ExitOnOutOfMemoryError");
    // the launcher's defaults for a broker (./queen exports them), so the suite measures those
    String defaults = System.getenv("QUEEN_SERVE_JVM");
    if (defaults != null && !defaults.isBlank()) {
      cmd.addAll(List.of(defaults.trim().split("\\s+")));
    }
    cmd.add("-cp");
    cmd.add(System.getProperty("java.class.path"));
    cmd.add(mainClass);
    cmd.add("serve");
    ProcessBuilder pb = new ProcessBuilder(cmd);
    Map<String, String> env = pb.environment();
    env.put("PORT", Integer.toString(port));
    env.put("HOST", "127.0.0.1");
    env.put("PG_DB", database);
    env.putAll(extraEnv);
    Files.createDirectories(log.getParent());
    pb.redirectErrorStream(true).redirectOutput(log.toFile());
    BrokerProcess broker = new BrokerProcess(pb.start(), "http://127.0.0.1:" + port);
    broker.awaitHealthy();
    return broker;
  }

  long pid() {
    return process.pid();
  }

  private void awaitHealthy() throws Exception {
    HttpClient http = HttpClient.newHttpClient();
    long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
    while (System.nanoTime() < deadline) {
      if (!process.isAlive()) {
        throw new IllegalStateException("the broker exited with " + process.exitValue());
      }
      try {
        HttpResponse<Void> r =
            http.send(
                HttpRequest.newBuilder(URI.create(url + "/health")).build(),
                HttpResponse.BodyHandlers.discarding());
        if (r.statusCode() == 200) {
          return;
        }
      } catch (java.io.IOException notYet) {
        // not listening yet
      }
      Thread.sleep(200);
    }
    throw new IllegalStateException("the broker did not become healthy in 60 s");
  }

  @Override
  public void close() throws Exception {
    process.destroy();
    if (!process.waitFor(30, java.util.concurrent.TimeUnit.SECONDS)) {
      process.destroyForcibly();
    }
  }
}
