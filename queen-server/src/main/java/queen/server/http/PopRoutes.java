package queen.server.http;

import java.time.Instant;
import java.util.List;
import java.util.Objects;
import java.util.UUID;
import queen.server.codec.Frame;
import queen.server.http.auth.Access;
import queen.server.ops.Statistics;
import queen.server.pop.Caller;
import queen.server.pop.PopRequest;
import queen.server.pop.PopResult;
import queen.server.pop.PopService;
import queen.server.pop.PopTarget;
import queen.server.pop.PoppedMessage;
import queen.server.store.MessageStore;

/**
 * The pop routes. Nothing to deliver is always 204 with no body, never a 4xx: a 4xx ends the
 * clients' consume loops, so an unknown queue or partition is simply empty.
 */
public final class PopRoutes implements Routes {
  /** The seed's default batch: raw HTTP callers that omit it get up to 200 under one lease. */
  static final int DEFAULT_BATCH = 200;

  /** Bounds one response; larger requests are served this many. */
  static final int MAX_BATCH = 10_000;

  /** More partitions than the SQL scan's candidate cap cannot be claimed in one pop. */
  static final int MAX_PARTITIONS = 512;

  static final String QUEUE_MODE = MessageStore.QUEUE_MODE;

  /** Long-poll deadline when wait=true and no timeout is given (DEFAULT_TIMEOUT). */
  static final int DEFAULT_TIMEOUT = 30_000;

  private final PopService pops;
  private final Statistics stats;
  private final Payloads payloads;
  private final Departures departures;
  private final long maxTimeoutMillis; // QUEEN_POP_MAX_TIMEOUT_MS

  public PopRoutes(
      PopService pops,
      Statistics stats,
      Payloads payloads,
      Departures departures,
      long maxTimeoutMillis) {
    this.stats = stats;
    this.pops = pops;
    this.payloads = payloads;
    this.departures = departures;
    this.maxTimeoutMillis = maxTimeoutMillis;
  }

  @Override
  public void declare(RouteTable rules) {
    rules.claim(
        "/api/v1/pop/queue/{queue}/partition/{partition}",
        Access.READ_WRITE,
        (req, res) -> {
          Params p = new Params(req);
          serve(req, res, p, new PopTarget.Partition(p.name("queue"), p.name("partition")), 1);
        });
    rules.claim(
        "/api/v1/pop/queue/{queue}",
        Access.READ_WRITE,
        (req, res) -> {
          Params p = new Params(req);
          serve(req, res, p, new PopTarget.Queue(p.name("queue")), partitions(p));
        });
    rules.claim(
        "/api/v1/pop",
        Access.READ_WRITE,
        (req, res) -> {
          Params p = new Params(req);
          String namespace = emptyToNull(p.string("namespace", ""));
          String task = emptyToNull(p.string("task", ""));
          // a bare discovery pop would be an unbounded scan of every queue
          if (namespace == null && task == null) {
            throw ApiException.badRequest("namespace or task is required to pop without a queue");
          }
          serve(req, res, p, new PopTarget.Discovery(namespace, task), partitions(p));
        });
  }

  private void serve(Request req, Response res, Params p, PopTarget target, int partitions) {
    PopRequest request = request(p, target, partitions);
    // only a long-poll waits long enough for its client to leave
    Caller caller = request.waitMillis() > 0 ? departures.watch(req) : new Caller();
    // a parked pop holds no thread: its answer is sent from whichever thread ends its wait
    res.defer();
    try {
      pops.pop(
          request,
          caller,
          new PopService.Answer() {
            @Override
            public void result(PopResult result) {
              departures.forget(caller);
              try {
                List<String> queues = result.messages().stream().map(PoppedMessage::queue).toList();
                stats.delivered(queues);
                if (request.autoAck()) {
                  queues.forEach(
                      q -> stats.acknowledged(q, "completed", false)); // acked as delivered
                }
                send(res, result);
              } catch (RuntimeException e) {
                res.fail(e); // a payload that cannot be opened, say: the same error as any route's
              }
            }

            @Override
            public void failed(RuntimeException e) {
              departures.forget(caller);
              if (e instanceof PopService.OverloadedException) {
                // overload is 503, which the clients retry; never 429, which would end their loops
                res.header("Retry-After", "1");
                Replies.error(res, 503, "Too many pops in flight, retry later");
              } else {
                res.fail(e);
              }
            }
          });
    } catch (RuntimeException e) {
      departures.forget(caller); // no answer will forget it
      throw e;
    }
  }

  private static int partitions(Params p) {
    return Math.min(Math.max(p.integer("partitions", 1), 1), MAX_PARTITIONS);
  }

  private static String emptyToNull(String s) {
    return s.isEmpty() ? null : s;
  }

  private PopRequest request(Params p, PopTarget target, int partitions) {
    int batch = Math.min(Math.max(p.integer("batch", DEFAULT_BATCH), 1), MAX_BATCH);
    String group = Objects.requireNonNullElse(p.optionalName("consumerGroup"), QUEUE_MODE);
    String mode = p.string("subscriptionMode", "all");
    String from = p.string("subscriptionFrom", "");
    boolean newOnly =
        (mode.equals("new") || mode.equals("new-only") || from.equals("now"))
            && (from.isEmpty() || from.equals("now")); // a timestamp given wins, as it always did
    // "new" is as of the pop's arrival, not of its claim: a long-poll woken by the push that made
    // its queue or partition took its subscription after that push, and skipped it
    Instant fromTime =
        from.isEmpty() || from.equals("now")
            ? (newOnly ? Instant.now() : null)
            : Fields.timestamp("subscriptionFrom", from);
    // timeout only matters with wait=true: then it is the long-poll deadline, capped so that a
    // client gone without closing its connection holds no pop for days
    long waitMillis =
        p.bool("wait", false)
            ? Math.clamp(p.integer("timeout", DEFAULT_TIMEOUT), 0, maxTimeoutMillis)
            : 0;
    return new PopRequest(
        target, group, batch, partitions, p.bool("autoAck", false), newOnly, fromTime, waitMillis);
  }

  private void send(Response res, PopResult result) {
    if (result.isEmpty()) {
      Replies.noContent(res);
      return;
    }
    Replies.json(res, 200, render(result));
  }

  /**
   * Writes the answer. Each payload's stored JSON bytes go verbatim under {@code data}; the values
   * every message of a partition shares are encoded once.
   */
  byte[] render(PopResult result) {
    List<PoppedMessage> messages = result.messages();
    JsonBytes out = new JsonBytes(sizeHint(messages));
    byte[] lease = JsonBytes.literal(result.leaseId() == null ? "" : result.leaseId().toString());
    byte[] group = JsonBytes.literal(result.group());
    PoppedMessage first = messages.getFirst();
    out.ascii("{\"success\":true,\"queue\":").string(first.queue());
    out.ascii(",\"partition\":").string(first.partition());
    out.ascii(",\"partitionId\":").uuid(first.partitionId());
    out.ascii(",\"leaseId\":").raw(lease);
    out.ascii(",\"consumerGroup\":").raw(group);
    out.ascii(",\"partitionsClaimed\":").number(result.partitionsClaimed());
    out.ascii(",\"messages\":[");
    UUID partitionOf = null;
    byte[] partitionId = null;
    byte[] partition = null;
    byte[] queue = null;
    long createdOf = Long.MIN_VALUE;
    byte[] created = null;
    for (int i = 0; i < messages.size(); i++) {
      PoppedMessage m = messages.get(i);
      Frame f = m.frame();
      if (!m.partitionId().equals(partitionOf)) {
        partitionOf = m.partitionId();
        partitionId = JsonBytes.literal(partitionOf);
        partition = JsonBytes.literal(m.partition());
        queue = JsonBytes.literal(m.queue());
      }
      if (m.createdAtMicros() != createdOf) {
        createdOf = m.createdAtMicros();
        created = JsonBytes.literal(Json.micros(createdOf));
      }
      out.ascii(i == 0 ? "{\"id\":" : ",{\"id\":").uuid(m.messageId());

      out.ascii(",\"transactionId\":").string(f.transactionId());
      out.ascii(",\"partitionId\":").raw(partitionId);
      out.ascii(",\"partition\":").raw(partition);
      out.ascii(",\"queue\":").raw(queue);
      out.ascii(",\"leaseId\":").raw(lease);
      out.ascii(",\"consumerGroup\":").raw(group);
      out.ascii(",\"data\":").raw(payloads.plain(f));
      out.ascii(",\"traceId\":").uuid(f.traceId());
      out.ascii(",\"producerSub\":").string(f.producerSub());
      out.ascii(",\"createdAt\":").raw(created).ascii("}");
    }
    return out.ascii("]}").toBytes();
  }

  /**
   * The answer's size: every payload and about 320 bytes around each. Not the first payload times
   * the count: 200 messages behind one of 5 MiB asked for a gigabyte, past the heap's cap.
   */
  private static int sizeHint(List<PoppedMessage> messages) {
    long size = 256;
    for (PoppedMessage m : messages) {
      size += 320 + m.frame().payload().length;
    }
    return (int) Math.min(size, Integer.MAX_VALUE - 16);
  }
}
