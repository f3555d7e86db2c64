package queen.client;

import com.fasterxml.jackson.databind.JsonNode;
import java.io.IOException;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * Sends one logical request: picks a broker for the request's affinity key, retries network errors,
 * timeouts, 408, 429 and 5xx answers (every broker at least once, each retry after a doubling
 * pause), and gives up at once on any other 4xx. A thread interrupted while waiting cancels the
 * exchange.
 */
final class Transport implements AutoCloseable {
  /**
   * What the broker answered: the status and the parsed body (JSON null for an empty body); {@code
   * repeated}: an earlier attempt failed retryably, so the request may have been applied already.
   */
  record Answer(int status, JsonNode body, boolean repeated) {}

  /** One request: path with its query, optional JSON body, affinity key and time limit. */
  record Call(
      String method,
      String path,
      Map<String, String> query,
      Object body,
      String key,
      Duration timeout) {
    static Call get(String path, Map<String, String> query, String key) {
      return new Call("GET", path, query, null, key, null);
    }

    static Call post(String path, Object body, String key) {
      return new Call("POST", path, Map.of(), body, key, null);
    }

    static Call delete(String path, Map<String, String> query, String key) {
      return new Call("DELETE", path, query, null, key, null);
    }

    Call withTimeout(Duration t) {
      return new Call(method, path, query, body, key, t);
    }
  }

  /** How long a close lets requests in flight end before it cuts them off. */
  private static final Duration CLOSE_GRACE = Duration.ofSeconds(1);

  private final ClientConfig config;
  private final Nodes nodes;
  private final HttpClient http;
  private volatile boolean closed;

  Transport(ClientConfig config) {
    this.config = config;
    this.nodes =
        new Nodes(
            config.urls(),
            config.loadBalancing(),
            config.virtualNodes(),
            config.healthRetryAfter().toNanos());
    this.http =
        HttpClient.newBuilder()
            .version(HttpClient.Version.HTTP_1_1)
            .connectTimeout(min(config.timeout(), Duration.ofSeconds(10)))
            .build();
  }

  Answer send(Call call) {
    refuseIfClosed();
    byte[] body = call.body() == null ? null : Json.bytes(call.body());
    Duration timeout = call.timeout() == null ? config.timeout() : call.timeout();
    var order = nodes.order(call.key() == null ? "" : call.key());
    if (!config.failover()) {
      order = order.subList(0, 1);
    }
    // every broker once at least, each retry after its pause, whichever broker it goes to: the
    // pause came only once every broker had been tried, so as many brokers as attempts took them
    // all at once, and a push during a rolling restart failed within milliseconds
    int tries = Math.max(config.retryAttempts(), order.size());
    QueenException last = null;
    boolean sentBefore = false;
    for (int i = 0; i < tries; i++) {
      if (i > 0) {
        Duration pause = config.retryDelay().multipliedBy(1L << Math.min(i - 1, 16));
        // not sooner than the broker asked (5 s while payload keys are unavailable): a push gave
        // up 3 s into such a window
        if (last != null && last.retryAfter() != null && last.retryAfter().compareTo(pause) > 0) {
          pause = last.retryAfter();
        }
        pause(pause);
      }
      String url = order.get(i % order.size());
      String token;
      try {
        token = token(call, url);
      } catch (QueenException e) {
        last = e; // the supplier's failure, not the broker's: it stays in the rotation
        continue;
      }
      try {
        Answer a = once(url, call, body, timeout, token);
        nodes.succeeded(url);
        return sentBefore ? new Answer(a.status(), a.body(), true) : a;
      } catch (QueenException e) {
        if (!e.retryable()) {
          throw e;
        }
        refuseIfClosed(); // a request the close cut off is not tried again
        sentBefore = true;
        nodes.failed(url);
        last = e;
      }
    }
    throw last;
  }

  private Answer once(String url, Call call, byte[] body, Duration timeout, String token) {
    HttpRequest.Builder b =
        HttpRequest.newBuilder(URI.create(url + call.path() + query(call.query())))
            .timeout(timeout)
            .header("Accept", "application/json");
    config.headers().forEach(b::header);
    if (token != null && !token.isBlank()) {
      b.header("Authorization", "Bearer " + token);
    }
    if (body != null) {
      b.header("Content-Type", "application/json");
      b.method(call.method(), HttpRequest.BodyPublishers.ofByteArray(body));
    } else {
      b.method(call.method(), HttpRequest.BodyPublishers.noBody());
    }
    CompletableFuture<HttpResponse<byte[]>> f =
        http.sendAsync(b.build(), HttpResponse.BodyHandlers.ofByteArray());
    HttpResponse<byte[]> res;
    try {
      // the request's timeout ends with the answer's headers: a body that stops coming (a host
      // gone mid-answer) would hold the caller for good
      res = f.get(timeout.toMillis() + Math.max(timeout.toMillis(), 5_000), TimeUnit.MILLISECONDS);
    } catch (InterruptedException e) {
      f.cancel(true);
      throw interrupted();
    } catch (TimeoutException e) {
      f.cancel(true);
      throw new QueenException(
          call.method() + " " + url + call.path() + " failed: the answer did not end in time", e);
    } catch (ExecutionException e) {
      Throwable cause = e.getCause() == null ? e : e.getCause();
      throw new QueenException(
          call.method() + " " + url + call.path() + " failed: " + describe(cause), cause);
    }
    int status = res.statusCode();
    if (status >= 200 && status < 300) {
      return new Answer(status, Json.parse(res.body()), false);
    }
    throw new QueenException(
        status, errorText(status, res.body()), retryAfter(res.headers().firstValue("Retry-After")));
  }

  /** A {@code Retry-After} in seconds, at most a minute; null when absent or an HTTP date. */
  private static Duration retryAfter(java.util.Optional<String> header) {
    try {
      return header
          .map(v -> Duration.ofSeconds(Math.clamp(Long.parseLong(v.strip()), 0, 60)))
          .orElse(null);
    } catch (NumberFormatException date) {
      return null;
    }
  }

  /**
   * The bearer token for this attempt. A supplier that throws (its identity provider away, say)
   * fails the attempt as a network error would, retried, instead of ending a consumer or its lease
   * renewal.
   */
  private String token(Call call, String url) {
    if (config.bearerToken() == null) {
      return null;
    }
    try {
      return config.bearerToken().get();
    } catch (RuntimeException e) {
      throw new QueenException(
          call.method() + " " + url + call.path() + " failed: the token supplier threw " + e, e);
    }
  }

  private void refuseIfClosed() {
    if (closed) {
      // not a QueenException with status 0, which callers retry: this one never passes
      throw new IllegalStateException("the client is closed");
    }
  }

  private static void pause(Duration d) {
    try {
      Thread.sleep(d);
    } catch (InterruptedException e) {
      throw interrupted();
    }
  }

  /**
   * The calling thread was interrupted mid-request: the exchange is abandoned, the interrupt flag
   * kept, and the caller gets a {@link CancellationException}.
   */
  private static CancellationException interrupted() {
    Thread.currentThread().interrupt();
    return new CancellationException("request cancelled: the calling thread was interrupted");
  }

  private static String errorText(int status, byte[] body) {
    String text = new String(body, StandardCharsets.UTF_8);
    try {
      JsonNode n = Json.MAPPER.readTree(body);
      if (n != null && n.hasNonNull("error")) {
        return n.get("error").asText();
      }
    } catch (IOException notJson) {
      // a proxy's HTML or plain-text page: keep it as the message
    }
    return text.isBlank() ? "HTTP " + status : text.strip();
  }

  private static String describe(Throwable t) {
    String m = t.getMessage();
    return t.getClass().getSimpleName() + (m == null ? "" : ": " + m);
  }

  static String query(Map<String, String> params) {
    if (params.isEmpty()) {
      return "";
    }
    StringBuilder sb = new StringBuilder();
    for (var e : params.entrySet()) {
      sb.append(sb.isEmpty() ? '?' : '&')
          .append(URLEncoder.encode(e.getKey(), StandardCharsets.UTF_8))
          .append('=')
          .append(URLEncoder.encode(e.getValue(), StandardCharsets.UTF_8));
    }
    return sb.toString();
  }

  static String segment(String s) {
    return URLEncoder.encode(s, StandardCharsets.UTF_8).replace("+", "%20");
  }

  static Map<String, String> params() {
    return new LinkedHashMap<>();
  }

  private static Duration min(Duration a, Duration b) {
    return a.compareTo(b) < 0 ? a : b;
  }

  /**
   * Refuses new requests, gives those in flight a second to end, then cuts them off (a long-poll on
   * another thread held a close, waiting for pending exchanges, for its whole timeout). An autoAck
   * pop cut off after the broker delivered loses that delivery, as at-most-once allows.
   */
  @Override
  public void close() {
    closed = true;
    http.shutdown();
    try {
      if (!http.awaitTermination(CLOSE_GRACE)) {
        http.shutdownNow();
      }
    } catch (InterruptedException e) {
      http.shutdownNow();
      Thread.currentThread().interrupt();
    }
  }
}
