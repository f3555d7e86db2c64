package queen.client;

import com.fasterxml.jackson.databind.JsonNode;
import java.net.URI;
import java.net.http.HttpRequest;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Supplier;

/**
 * A client of a Queen broker (or of several, for failover). Thread-safe and immutable once built;
 * share one per process and close it on shutdown, which flushes buffered pushes.
 *
 * <pre>{@code
 * try (Queen queen = Queen.connect("http://localhost:6632")) {
 *   queen.queue("orders").create();
 *   queen.queue("orders").partition("customer-42").push(Map.of("total", 12));
 *   for (Message m : queen.queue("orders").batch(10).wait(false).pop()) {
 *     queen.ack(m, true);
 *   }
 * }
 * }</pre>
 */
public final class Queen implements AutoCloseable {
  /** The consumer group every queue-mode consumer shares. */
  public static final String QUEUE_MODE = "__QUEUE_MODE__";

  final Transport transport;
  final PushBuffers buffers;

  /** The consumers started through this client and still running, stopped by {@link #close}. */
  private final Set<Consumer> consumers = ConcurrentHashMap.newKeySet();

  private Queen(ClientConfig config) {
    this.transport = new Transport(config);
    this.buffers = new PushBuffers(this);
  }

  /** A client of one broker with the default settings. */
  public static Queen connect(String url) {
    return builder().url(url).build();
  }

  /** A client of several brokers on one database, with affinity load balancing and failover. */
  public static Queen connect(String... urls) {
    return builder().urls(List.of(urls)).build();
  }

  public static Builder builder() {
    return new Builder();
  }

  /** A builder for pushing to, popping from, consuming or configuring the queue {@code name}. */
  public QueueBuilder queue(String name) {
    return new QueueBuilder(this, name);
  }

  /**
   * Acks one message: {@code true} is {@code completed}, {@code false} is {@code failed} (the batch
   * is redelivered, or dead-lettered once the queue's retry limit is spent).
   */
  public AckResult ack(Message message, boolean success) {
    return ack(List.of(message), success ? "completed" : "failed", null).getFirst();
  }

  /**
   * Acks messages with a status ({@code completed}, {@code failed}, {@code retry} or {@code dlq});
   * {@code error} is stored with a dead letter. The group is the messages' own.
   */
  public List<AckResult> ack(List<Message> messages, String status, String error) {
    return Acks.send(this, messages, status, error);
  }

  /** Acks messages as {@code completed} ({@code true}) or {@code failed} ({@code false}). */
  public List<AckResult> ack(List<Message> messages, boolean success) {
    return ack(messages, success ? "completed" : "failed", null);
  }

  /** Extends the lease the message was delivered under to 60 s from now (the broker's default). */
  public LeaseRenewal renew(Message message) {
    return renew(message.leaseId());
  }

  /** Extends every distinct lease of these messages, one request per lease. */
  public List<LeaseRenewal> renew(List<Message> messages) {
    LinkedHashSet<String> leases = new LinkedHashSet<>();
    for (Message m : messages) {
      if (m.leaseId() != null && !m.leaseId().isEmpty()) {
        leases.add(m.leaseId());
      }
    }
    List<LeaseRenewal> out = new ArrayList<>(leases.size());
    for (String lease : leases) {
      out.add(renew(lease));
    }
    return out;
  }

  /** Extends every live lease held under {@code leaseId} to 60 s from now. */
  public LeaseRenewal renew(String leaseId) {
    return renew(leaseId, 0);
  }

  /**
   * Extends every live lease held under {@code leaseId} to {@code seconds} from now (0: the
   * broker's default, 60); a lease that already runs longer keeps its end.
   */
  public LeaseRenewal renew(String leaseId, int seconds) {
    if (leaseId == null || leaseId.isEmpty()) {
      throw new IllegalArgumentException("no lease to renew (auto-acked messages have none)");
    }
    if (seconds < 0) {
      throw new IllegalArgumentException("seconds must not be negative, got " + seconds);
    }
    Map<String, Object> extend = seconds == 0 ? Map.of() : Map.of("seconds", seconds);
    JsonNode body =
        transport
            .send(
                Transport.Call.post(
                    "/api/v1/lease/" + Transport.segment(leaseId) + "/extend", extend, leaseId))
            .body();
    JsonNode first = body.isArray() && !body.isEmpty() ? body.get(0) : body;
    return new LeaseRenewal(
        leaseId,
        first.path("success").asBoolean(false),
        Json.instant(first, "expiresAt"),
        Json.text(first, "error"));
  }

  /**
   * A builder for discovery: with {@link QueueBuilder#namespace} and/or {@link QueueBuilder#task}
   * set, it pops from any queue that matches.
   */
  public QueueBuilder queue() {
    return new QueueBuilder(this, null);
  }

  /** An atomic unit of acks and pushes, sent as one request by {@link Transaction#commit()}. */
  public Transaction transaction() {
    return new Transaction(this);
  }

  /** The operator routes: health, queues, consumer groups, dead letters, maintenance, metrics. */
  public Admin admin() {
    return new Admin(this);
  }

  /** Sends every buffered push now, in batches of each buffer's message count. */
  public void flushAllBuffers() {
    buffers.flushAll();
  }

  /** Counts of what {@link QueueBuilder#buffer} holds and has sent. */
  public BufferStats bufferStats() {
    return buffers.stats();
  }

  void started(Consumer c) {
    consumers.add(c);
  }

  void ended(Consumer c) {
    consumers.remove(c);
  }

  /** How long a close called from a handler waits for the batches in flight to be acked. */
  static final Duration HANDLERS_WAIT = Duration.ofMinutes(1);

  /**
   * Stops the consumers started through this client (their running handlers finish and are acked),
   * flushes buffered pushes, then releases the HTTP client. Called from inside a handler, it
   * returns at once and does so on a thread of its own once the consumers have ended, or after
   * {@link #HANDLERS_WAIT} (a handler that never returns kept the program from ending): closed at
   * once, the client refused the acks of that handler's batch and of every other batch in flight,
   * which came again at their leases' end.
   */
  @Override
  public void close() {
    if (consumers.stream().anyMatch(Consumer::onWorker)) {
      consumers.forEach(Consumer::requestStop); // no batch taken after the close
      // not a daemon: a program that ends once its consumers have ended still flushes its buffers
      Thread.ofPlatform().daemon(false).name("queen-close").start(this::closeAfterHandlers);
      return;
    }
    try {
      consumers.forEach(Consumer::stop);
    } finally {
      release();
    }
  }

  private void closeAfterHandlers() {
    long deadline = System.nanoTime() + HANDLERS_WAIT.toNanos();
    try {
      for (Consumer c : consumers) {
        if (!c.ended(Math.max(0, deadline - System.nanoTime()))) {
          break;
        }
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    } finally {
      release();
    }
  }

  /** Flushes buffered pushes and releases the HTTP client. */
  private void release() {
    try {
      buffers.close();
    } finally {
      transport.close();
    }
  }

  /** Settings of a client; every setter checks its argument, {@link #build()} checks the rest. */
  public static final class Builder {
    private final List<String> urls = new ArrayList<>();
    private LoadBalancing loadBalancing = LoadBalancing.AFFINITY;
    private int virtualNodes = 128;
    private boolean failover = true;
    private Duration healthRetryAfter = Duration.ofSeconds(5);
    private Duration timeout = Duration.ofSeconds(30);
    private int retryAttempts = 3;
    private Duration retryDelay = Duration.ofSeconds(1);
    private Supplier<String> bearerToken;
    private final Map<String, String> headers = new LinkedHashMap<>();

    private Builder() {}

    /** Adds a broker URL, such as {@code http://localhost:6632}; a trailing slash is dropped. */
    public Builder url(String url) {
      Objects.requireNonNull(url, "url");
      String u = url.strip().replaceAll("/+$", "");
      URI parsed;
      try {
        parsed = URI.create(u);
      } catch (IllegalArgumentException e) {
        throw new IllegalArgumentException("not a URL: '" + url + "'");
      }
      if (!"http".equals(parsed.getScheme()) && !"https".equals(parsed.getScheme())
          || parsed.getHost() == null) {
        throw new IllegalArgumentException(
            "broker URL must be http(s)://host[:port]: '" + url + "'");
      }
      if (!urls.contains(u)) {
        urls.add(u);
      }
      return this;
    }

    public Builder urls(List<String> list) {
      list.forEach(this::url);
      return this;
    }

    /** How a request picks a broker among several; {@link LoadBalancing#AFFINITY} by default. */
    public Builder loadBalancing(LoadBalancing strategy) {
      this.loadBalancing = Objects.requireNonNull(strategy, "loadBalancing");
      return this;
    }

    /** Virtual nodes per broker on the affinity ring (128). */
    public Builder affinityVirtualNodes(int n) {
      this.virtualNodes = positive(n, "affinityVirtualNodes");
      return this;
    }

    /** Whether a failed request moves on to the next broker (true). */
    public Builder failover(boolean enabled) {
      this.failover = enabled;
      return this;
    }

    /** How long a broker that failed is left out before it is tried again (5 s). */
    public Builder healthRetryAfter(Duration d) {
      this.healthRetryAfter = nonNegative(d, "healthRetryAfter");
      return this;
    }

    /** Time limit of one request (30 s); a long-poll gets its wait plus 5 s. */
    public Builder timeout(Duration d) {
      this.timeout = nonNegative(d, "timeout");
      if (d.isZero()) {
        throw new IllegalArgumentException("timeout must be positive");
      }
      return this;
    }

    /**
     * Attempts per request (3; with several brokers, every one at least once, in turn) and the
     * delay before the second (1 s, doubling after). Only network errors, timeouts, 408, 429 and
     * 5xx answers are retried, and a repeat stores nothing twice (pushes carry their transaction
     * ids, a repeated ack succeeds once applied); but a transaction whose first attempt committed
     * unanswered is refused on repeat as a duplicate push (see {@link Transaction#commit}).
     */
    public Builder retries(int attempts, Duration delay) {
      this.retryAttempts = positive(attempts, "retry attempts");
      this.retryDelay = nonNegative(delay, "retry delay");
      return this;
    }

    /** Sends {@code Authorization: Bearer <token>} with every request. */
    public Builder bearerToken(String token) {
      if (token == null || token.isBlank()) {
        throw new IllegalArgumentException("bearer token must not be blank");
      }
      this.bearerToken = () -> token;
      return this;
    }

    /**
     * Asks {@code tokens} for the bearer token before every request (each retry too), for tokens
     * that expire and are renewed; a null or blank answer sends none.
     */
    public Builder tokenSupplier(Supplier<String> tokens) {
      this.bearerToken = Objects.requireNonNull(tokens, "token supplier");
      return this;
    }

    /** Sends this header with every request. */
    public Builder header(String name, String value) {
      Objects.requireNonNull(value, "header value");
      try {
        HttpRequest.newBuilder().header(name, value);
      } catch (IllegalArgumentException e) {
        throw new IllegalArgumentException(
            "header '" + name + "' cannot be set: " + e.getMessage());
      }
      headers.put(name, value);
      return this;
    }

    public Queen build() {
      if (urls.isEmpty()) {
        throw new IllegalArgumentException("at least one broker URL is required");
      }
      return new Queen(
          new ClientConfig(
              List.copyOf(urls),
              loadBalancing,
              virtualNodes,
              failover,
              healthRetryAfter,
              timeout,
              retryAttempts,
              retryDelay,
              bearerToken,
              Map.copyOf(headers)));
    }

    private static int positive(int n, String what) {
      if (n < 1) {
        throw new IllegalArgumentException(what + " must be at least 1, got " + n);
      }
      return n;
    }

    private static Duration nonNegative(Duration d, String what) {
      Objects.requireNonNull(d, what);
      if (d.isNegative()) {
        throw new IllegalArgumentException(what + " must not be negative, got " + d);
      }
      return d;
    }
  }
}
