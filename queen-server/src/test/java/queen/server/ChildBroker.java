package queen.server;

import java.io.File;
import java.net.ServerSocket;
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
import queen.server.store.DbConfig;

/** A broker in a JVM of its own, started as `queen serve` starts it, for tests that SIGKILL it. */
public final class ChildBroker {
  private ChildBroker() {}

  public static void main(String[] args) throws Exception {
    System.exit(new ServeCommand().call());
  }

  /**
   * A started child on the database; its URL, once /health answers, and its log. The caller kills
   * it.
   */
  public record Started(Process process, String url, Path log) {}

  public static Started start(DbConfig db) throws Exception {
    return start(db, List.of(), Map.of());
  }

  /**
   * As {@link #start(DbConfig)}, the JVM run under {@code wrapper} (e.g. {@code prlimit
   * --fsize=...}) with {@code env} added to its environment.
   */
  public static Started start(DbConfig db, List<String> wrapper, Map<String, String> env)
      throws Exception {
    int port;
    try (ServerSocket free = new ServerSocket(0)) {
      port = free.getLocalPort();
    }
    String java = ProcessHandle.current().info().command().orElse("java");
    List<String> command = new ArrayList<>(wrapper);
    command.addAll(
        List.of(java, "-cp", System.getProperty("java.class.path"), ChildBroker.class.getName()));
    ProcessBuilder pb = new ProcessBuilder(command);
    pb.environment().put("PG_HOST", db.host());
    pb.environment().put("PG_PORT", Integer.toString(db.port()));
    pb.environment().put("PG_USER", db.user());
    pb.environment().put("PG_DB", db.database());
    pb.environment().put("HOST", "127.0.0.1");
    pb.environment().put("PORT", Integer.toString(port));
    pb.environment()
        .put("FILE_BUFFER_DIR", Files.createTempDirectory("queen-child-buffer").toString());
    pb.environment().putAll(env);
    File log = Files.createTempFile("queen-child", ".log").toFile();
    pb.redirectErrorStream(true).redirectOutput(log);
    Process p = pb.start();
    String url = "http://127.0.0.1:" + port;
    HttpClient http = HttpClient.newHttpClient();
    long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
    while (System.nanoTime() < deadline) {
      if (!p.isAlive()) {
        throw new IllegalStateException(
            "the child broker exited: " + Files.readString(log.toPath()));
      }
      try {
        HttpRequest health = HttpRequest.newBuilder(URI.create(url + "/health")).build();
        if (http.send(health, HttpResponse.BodyHandlers.discarding()).statusCode() == 200) {
          return new Started(p, url, log.toPath());
        }
      } catch (java.io.IOException notYet) {
        // not listening yet
      }
      Thread.sleep(20);
    }
    p.destroyForcibly();
    throw new IllegalStateException("the child broker was not healthy within 60 s");
  }
}
