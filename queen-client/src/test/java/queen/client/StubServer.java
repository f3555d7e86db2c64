package queen.client;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.IntFunction;

/**
 * A stand-in broker on a free loopback port: the n-th request (from 0) gets the status and body
 * {@code answer} gives for n. Counts requests.
 */
final class StubServer implements AutoCloseable {
  record Answer(int status, String body, Map<String, String> headers) {
    Answer(int status, String body) {
      this(status, body, Map.of());
    }
  }

  private final HttpServer server;
  final AtomicInteger requests = new AtomicInteger();

  StubServer(IntFunction<Answer> answer) {
    try {
      server = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    server.setExecutor(Executors.newVirtualThreadPerTaskExecutor());
    server.createContext(
        "/",
        exchange -> {
          Answer a = answer.apply(requests.getAndIncrement());
          reply(exchange, a);
        });
    server.start();
  }

  private static void reply(HttpExchange exchange, Answer a) throws IOException {
    exchange.getRequestBody().readAllBytes();
    byte[] body = a.body().getBytes(StandardCharsets.UTF_8);
    exchange.getResponseHeaders().add("Content-Type", "application/json");
    a.headers().forEach(exchange.getResponseHeaders()::add);
    exchange.sendResponseHeaders(a.status(), body.length == 0 ? -1 : body.length);
    if (body.length > 0) {
      exchange.getResponseBody().write(body);
    }
    exchange.close();
  }

  String url() {
    return "http://127.0.0.1:" + server.getAddress().getPort();
  }

  @Override
  public void close() {
    server.stop(0);
  }
}
