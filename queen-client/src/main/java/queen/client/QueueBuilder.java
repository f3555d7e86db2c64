package queen.client;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * What to do with one queue: configure it, push to it, pop or consume from it. Made by {@link
 * Queen#queue(String)}; the setters return this builder, which is not thread-safe (make one per
 * use, they are cheap).
 *
 * <pre>{@code
 * queen.queue("orders").config(Map.of("leaseTime", 30, "retryLimit", 3)).create();
 * queen.queue("orders").partition("customer-42").push(Map.of("total", 12));
 * Consumer c = queen.queue("orders").group("billing").batch(10).concurrency(4)
 *     .consume(batch -> batch.forEach(m -> bill(m.data(Order.class))));
 * }</pre>
 */
public final class QueueBuilder {
  private final Queen queen;
  private final String name;
  private String partition;
  private String group;
  private String namespace;
  private String task;
  private int batch = 1;
  private int partitions = 1;
  private boolean wait = true;
  private int timeoutMillis = 30_000;
  private Boolean autoAck;
  private String subscriptionMode;
  private String subscriptionFrom;
  private int concurrency = 1;
  private long limit;
  private long idleMillis;
  private long renewLeaseMillis;
  private final Map<String, Object> options = new LinkedHashMap<>();

  QueueBuilder(Queen queen, String name) {
    this.queen = queen;
    this.name = name;
  }

  /** The partition to push to or pop from; unset, pushes go to {@code Default}, pops take any. */
  public QueueBuilder partition(String partition) {
    this.partition = Objects.requireNonNull(partition, "partition");
    return this;
  }

  /** The consumer group; unset, consumers share the queue ({@code __QUEUE_MODE__}). */
  public QueueBuilder group(String group) {
    this.group = Objects.requireNonNull(group, "group");
    return this;
  }

  /** The queue's namespace on {@link #create()}, or a discovery filter when no queue is named. */
  public QueueBuilder namespace(String namespace) {
    this.namespace = namespace;
    return this;
  }

  /** The queue's task on {@link #create()}, or a discovery filter when no queue is named. */
  public QueueBuilder task(String task) {
    this.task = task;
    return this;
  }

  /** Most messages one pop returns (1). */
  public QueueBuilder batch(int n) {
    this.batch = atLeastOne(n, "batch");
    return this;
  }

  /** Most partitions one pop may drain (1). */
  public QueueBuilder partitions(int n) {
    this.partitions = atLeastOne(n, "partitions");
    return this;
  }

  /** Whether a pop waits for messages up to {@link #timeoutMillis} (true). */
  public QueueBuilder wait(boolean wait) {
    this.wait = wait;
    return this;
  }

  /** How long a waiting pop waits before it answers empty (30000). */
  public QueueBuilder timeoutMillis(int millis) {
    if (millis < 0) {
      throw new IllegalArgumentException("timeoutMillis must not be negative, got " + millis);
    }
    this.timeoutMillis = millis;
    return this;
  }

  /**
   * For {@link #pop()}: when set, sent to the broker, which then commits the messages as it
   * delivers them (at-most-once). For {@link #consume}: whether the consumer acks after the handler
   * (true); false leaves acking to the handler.
   */
  public QueueBuilder autoAck(boolean autoAck) {
    this.autoAck = autoAck;
    return this;
  }

  /**
   * Where a new consumer group starts on this queue: {@code "new"} skips what is already there;
   * anything else (the default) starts from the oldest retained message.
   */
  public QueueBuilder subscriptionMode(String mode) {
    this.subscriptionMode = Objects.requireNonNull(mode, "subscriptionMode");
    return this;
  }

  /** A new consumer group starts at the first message at or after this instant. */
  public QueueBuilder subscriptionFrom(Instant from) {
    this.subscriptionFrom = from.toString();
    return this;
  }

  /** A new consumer group starts at {@code "now"} or at an ISO-8601 instant. */
  public QueueBuilder subscriptionFrom(String from) {
    if (!from.equals("now")) {
      Instant.parse(from);
    }
    this.subscriptionFrom = from;
    return this;
  }

  /** Workers of {@link #consume}, each on its own virtual thread (1). */
  public QueueBuilder concurrency(int n) {
    this.concurrency = atLeastOne(n, "concurrency");
    return this;
  }

  /** {@link #consume} stops after this many messages in all (no limit). */
  public QueueBuilder limit(long n) {
    if (n < 1) {
      throw new IllegalArgumentException("limit must be at least 1, got " + n);
    }
    this.limit = n;
    return this;
  }

  /**
   * {@link #consume} stops once no message has arrived for this long (never), its {@code await()}
   * throwing the last error when the broker could not be reached meanwhile.
   */
  public QueueBuilder idleMillis(long millis) {
    if (millis < 1) {
      throw new IllegalArgumentException("idleMillis must be at least 1, got " + millis);
    }
    this.idleMillis = millis;
    return this;
  }

  /** {@link #consume} extends the lease of a batch every {@code intervalMillis} while it runs. */
  public QueueBuilder renewLease(boolean renew, long intervalMillis) {
    if (renew && intervalMillis < 1) {
      throw new IllegalArgumentException("renewLease interval must be at least 1 ms");
    }
    this.renewLeaseMillis = renew ? intervalMillis : 0;
    return this;
  }

  /**
   * Queue options for {@link #create()}, such as {@code leaseTime} (s), {@code retryLimit}, {@code
   * delayedProcessing} (s), {@code windowBuffer} (s) and {@code retentionSeconds}; later calls add
   * to earlier ones.
   */
  public QueueBuilder config(Map<String, ?> options) {
    this.options.putAll(options);
    return this;
  }

  /**
   * Buffers pushes client-side, sending one request per {@code messageCount} items or {@code
   * millis} after the first buffered item, whichever comes first; {@link Queen#close()} flushes.
   * The returned builder pushes into the buffer.
   */
  public BufferedPush buffer(int messageCount, long millis) {
    atLeastOne(messageCount, "buffer message count");
    if (millis < 1) {
      throw new IllegalArgumentException("buffer time must be at least 1 ms, got " + millis);
    }
    return new BufferedPush(queen, name(), partitionOrDefault(), messageCount, millis);
  }

  /** Handles messages one at a time; see {@link PerMessage#consume}. */
  public PerMessage each() {
    return new PerMessage(this);
  }

  /** Creates the queue, or replaces its options, with what {@link #config} gave. */
  public JsonNode create() {
    Map<String, Object> body = new LinkedHashMap<>();
    body.put("queue", name());
    body.put("namespace", namespace);
    body.put("task", task);
    body.put("options", options);
    return queen.transport.send(Transport.Call.post("/api/v1/configure", body, name())).body();
  }

  /** Deletes the queue with its messages and cursors; true if it existed. */
  public boolean delete() {
    JsonNode body =
        queen
            .transport
            .send(
                new Transport.Call(
                    "DELETE",
                    "/api/v1/resources/queues/" + Transport.segment(name()),
                    Map.of(),
                    null,
                    name(),
                    null))
            .body();
    return body.path("existed").asBoolean(false);
  }

  /**
   * Pushes items, answering one result per item in order. An item that is a map (or object) with a
   * {@code data} or {@code payload} field is an envelope: that field is the payload and its {@code
   * transactionId} and {@code traceId} fields are used; anything else is the payload itself. Items
   * without a transaction id get a fresh UUIDv7, so a retried push is not stored twice.
   */
  public List<PushResult> push(List<?> items) {
    List<ObjectNode> wire = new ArrayList<>(items.size());
    for (Object item : items) {
      wire.add(PushItems.envelope(name(), partitionOrDefault(), item));
    }
    return PushItems.send(queen, wire, name() + ":" + partitionOrDefault());
  }

  /** Pushes each argument as one item; see {@link #push(List)}. */
  public List<PushResult> push(Object... items) {
    return push(Arrays.asList(items));
  }

  /**
   * Pops up to {@link #batch} messages, waiting up to {@link #timeoutMillis} when {@link #wait} is
   * on; empty when nothing came. Ack them with {@link Queen#ack}, or they are delivered again once
   * the queue's lease time ends.
   */
  public List<Message> pop() {
    return pop(batch, timeoutMillis, autoAck, "Default");
  }

  /** A dead-letter query for this queue and a consumer group (null for every group). */
  public DeadLetterQuery dlq(String group) {
    return new DeadLetterQuery(queen, name(), group);
  }

  /** Dead letters of every consumer group of this queue. */
  public DeadLetterQuery dlq() {
    return dlq(null);
  }

  /**
   * Starts {@link #concurrency} workers that pop and hand each batch to {@code handler}; see {@link
   * Consumer}.
   */
  public Consumer consume(BatchHandler handler) {
    Objects.requireNonNull(handler, "handler");
    return Consumer.start(settings(), handler);
  }

  /** The {@link QueueBuilder#each()} stage: a handler that sees one message at a time. */
  public static final class PerMessage {
    private final QueueBuilder queue;

    private PerMessage(QueueBuilder queue) {
      this.queue = queue;
    }

    /**
     * Starts the consumer. Within a batch, messages are handled in order; if one throws, it is
     * acked failed and the rest of its partition's messages in the batch are left for redelivery
     * (after the ones before it are acked completed); other partitions' messages go on.
     */
    public Consumer consume(MessageHandler handler) {
      Objects.requireNonNull(handler, "handler");
      return Consumer.start(queue.settings(), handler);
    }
  }

  List<Message> pop(int n, int waitMillis, Boolean autoAckParam, String keyPartition) {
    Map<String, String> q = Transport.params();
    q.put("batch", Integer.toString(n));
    q.put("wait", Boolean.toString(wait));
    q.put("timeout", Integer.toString(waitMillis));
    if (group != null) {
      q.put("consumerGroup", group);
    }
    if (namespace != null) {
      q.put("namespace", namespace);
    }
    if (task != null) {
      q.put("task", task);
    }
    if (autoAckParam != null) {
      q.put("autoAck", autoAckParam.toString());
    }
    if (subscriptionMode != null) {
      q.put("subscriptionMode", subscriptionMode);
    }
    if (subscriptionFrom != null) {
      q.put("subscriptionFrom", subscriptionFrom);
    }
    if (partitions > 1) {
      q.put("partitions", Integer.toString(partitions));
    }
    String path;
    String key;
    String g = group == null ? Queen.QUEUE_MODE : group;
    if (name == null) {
      if (namespace == null && task == null) {
        throw new IllegalStateException("pop needs a queue name, a namespace or a task");
      }
      path = "/api/v1/pop";
      key = nullToEmpty(namespace) + ":" + nullToEmpty(task) + ":" + g;
    } else if (partition == null) {
      path = "/api/v1/pop/queue/" + Transport.segment(name);
      key = name + ":" + keyPartition + ":" + g;
    } else {
      path =
          "/api/v1/pop/queue/"
              + Transport.segment(name)
              + "/partition/"
              + Transport.segment(partition);
      key = name + ":" + partition + ":" + g;
    }
    Transport.Call call = Transport.Call.get(path, q, key);
    if (wait) {
      call = call.withTimeout(Duration.ofMillis(waitMillis + 5_000L));
    }
    JsonNode body = queen.transport.send(call).body();
    JsonNode messages = body.path("messages");
    List<Message> out = new ArrayList<>(messages.size());
    for (JsonNode m : messages) {
      if (!m.isNull()) {
        out.add(Message.from(m, name, queen));
      }
    }
    return out;
  }

  /** A snapshot of this builder for a consumer, so later changes to it do not reach the workers. */
  private ConsumeSettings settings() {
    QueueBuilder copy = new QueueBuilder(queen, name);
    copy.partition = partition;
    copy.group = group;
    copy.namespace = namespace;
    copy.task = task;
    copy.batch = batch;
    copy.partitions = partitions;
    copy.wait = wait;
    copy.timeoutMillis = timeoutMillis;
    copy.subscriptionMode = subscriptionMode;
    copy.subscriptionFrom = subscriptionFrom;
    return new ConsumeSettings(
        queen,
        copy,
        batch,
        timeoutMillis,
        wait,
        concurrency,
        limit,
        idleMillis,
        renewLeaseMillis,
        autoAck == null || autoAck);
  }

  /** The queue's name, or the discovery filter, for thread names and messages. */
  String label() {
    return name != null ? name : nullToEmpty(namespace) + "/" + nullToEmpty(task);
  }

  private String name() {
    if (name == null) {
      throw new IllegalStateException("this needs a queue name");
    }
    return name;
  }

  private String partitionOrDefault() {
    return partition == null ? "Default" : partition;
  }

  private static String nullToEmpty(String s) {
    return s == null ? "" : s;
  }

  private static int atLeastOne(int n, String what) {
    if (n < 1) {
      throw new IllegalArgumentException(what + " must be at least 1, got " + n);
    }
    return n;
  }
}
