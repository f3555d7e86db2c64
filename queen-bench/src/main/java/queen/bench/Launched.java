package queen.bench;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.TimeUnit;

/** A broker started by a shell command, as an operator starts it: for start-up and kill runs. */
final class Launched {
  private Launched() {}

  /** Runs {@code command} with the broker's port, database and buffer directory set. */
  static Process start(
      String command, int port, String database, Path buffer, ProcessBuilder.Redirect log)
      throws IOException {
    ProcessBuilder pb = new ProcessBuilder("bash", "-c", "exec " + command);
    pb.environment().put("PORT", Integer.toString(port));
    pb.environment().put("HOST", "127.0.0.1");
    pb.environment().put("PG_DB", database);
    pb.environment().put("FILE_BUFFER_DIR", buffer.toString());
    pb.redirectErrorStream(true).redirectOutput(log);
    return pb.start();
  }

  /** Waits until {@code /health} answers 200; fails if the process exits or 120 s pass. */
  static void awaitHealthy(HttpClient http, Process p, String base) throws Exception {
    long deadline = System.nanoTime() + Duration.ofSeconds(120).toNanos();
    while (System.nanoTime() < deadline) {
      if (!p.isAlive()) {
        throw new IllegalStateException("the broker exited with " + p.exitValue());
      }
      try {
        HttpRequest health = HttpRequest.newBuilder(URI.create(base + "/health")).build();
        if (http.send(health, HttpResponse.BodyHandlers.discarding()).statusCode() == 200) {
          return;
        }
      } catch (IOException notYet) {
        // not listening yet
      }
      Thread.sleep(5);
    }
    throw new IllegalStateException("the broker was not healthy within 120 s");
  }

  /** SIGTERM, as an orchestrator stops it, and wait: the next start finds the port free. */
  static void stop(Process p) throws InterruptedException {
    p.destroy();
    if (!p.waitFor(30, TimeUnit.SECONDS)) {
      p.destroyForcibly().waitFor();
    }
  }
}
