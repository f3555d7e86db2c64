package queen.client;

import com.fasterxml.jackson.databind.JsonNode;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * A page of dead letters, newest first, from {@link QueueBuilder#dlq(String)}.
 *
 * <pre>{@code
 * for (DeadLetter d : queen.queue("orders").dlq("billing").limit(20).get()) {
 *   log.warn("{} failed: {}", d.transactionId(), d.errorMessage());
 * }
 * }</pre>
 */
public final class DeadLetterQuery {
  private final Queen queen;
  private final String queue;
  private final String group;
  private String partition;
  private int limit = 100;
  private int offset;
  private Instant from;
  private Instant to;

  DeadLetterQuery(Queen queen, String queue, String group) {
    this.queen = queen;
    this.queue = queue;
    this.group = group;
  }

  /** Only this partition's. */
  public DeadLetterQuery partition(String name) {
    this.partition = name;
    return this;
  }

  /**
   * At most this many (100; the broker caps it at 1000). The broker may end a page sooner, after
   * the letter whose payload crosses its QUEEN_POP_MAX_BYTES: the next page starts at this offset
   * plus the letters returned.
   */
  public DeadLetterQuery limit(int n) {
    if (n < 1) {
      throw new IllegalArgumentException("limit must be at least 1, got " + n);
    }
    this.limit = n;
    return this;
  }

  /** Skips this many of the newest (0). */
  public DeadLetterQuery offset(int n) {
    if (n < 0) {
      throw new IllegalArgumentException("offset must not be negative, got " + n);
    }
    this.offset = n;
    return this;
  }

  /** Only those dead-lettered at or after this instant. */
  public DeadLetterQuery from(Instant t) {
    this.from = t;
    return this;
  }

  /** Only those dead-lettered at or before this instant. */
  public DeadLetterQuery to(Instant t) {
    this.to = t;
    return this;
  }

  public List<DeadLetter> get() {
    Map<String, String> q = Transport.params();
    q.put("queue", queue);
    if (group != null) {
      q.put("consumerGroup", group);
    }
    if (partition != null) {
      q.put("partition", partition);
    }
    q.put("limit", Integer.toString(limit));
    q.put("offset", Integer.toString(offset));
    if (from != null) {
      q.put("from", from.toString());
    }
    if (to != null) {
      q.put("to", to.toString());
    }
    JsonNode body = queen.transport.send(Transport.Call.get("/api/v1/dlq", q, queue)).body();
    List<DeadLetter> out = new ArrayList<>();
    for (JsonNode n : body.path("messages")) {
      out.add(DeadLetter.from(n));
    }
    return out;
  }
}
