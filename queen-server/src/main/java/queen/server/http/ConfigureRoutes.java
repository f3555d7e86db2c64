package queen.server.http;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.List;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import queen.server.http.auth.Access;
import queen.server.store.ConfiguredQueue;
import queen.server.store.QueueOptions;
import queen.server.store.QueueStore;

/**
 * {@code POST /api/v1/configure}: create or fully replace a queue's options (Queen's semantics:
 * absent keys take their defaults), except minPopWaitTime, which Queen's clients never send and
 * which keeps its stored value when absent.
 */
public final class ConfigureRoutes implements Routes {
  private static final Logger log = LoggerFactory.getLogger(ConfigureRoutes.class);
  private static final List<String> NON_NEGATIVE_INTS =
      List.of(
          "leaseTime",
          "retryLimit",
          "retryDelay",
          "maxSize",
          "ttl",
          "delayedProcessing",
          "windowBuffer",
          "retentionSeconds",
          "completedRetentionSeconds",
          "maxWaitTimeSeconds",
          "minPopWaitTime");
  private static final List<String> BOOLEANS =
      List.of("deadLetterQueue", "dlqAfterMaxRetries", "retentionEnabled", "encryptionEnabled");

  private final QueueStore queues;
  private final Runnable configured;
  private final boolean canEncrypt;

  /**
   * @param configured run after each configure, so that this broker applies a new minimum pop wait
   *     and a queue's encryption at once rather than at its next state refresh
   */
  public ConfigureRoutes(QueueStore queues, Runnable configured, boolean canEncrypt) {
    this.queues = queues;
    this.configured = configured;
    this.canEncrypt = canEncrypt;
  }

  @Override
  public void declare(RouteTable rules) {
    rules.post(
        "/api/v1/configure",
        Access.READ_WRITE,
        (req, res) -> {
          JsonNode body = Json.objectBody(req);
          JsonNode name = body.get("queue");
          if (name == null || !name.isTextual() || name.asText().isEmpty()) {
            throw ApiException.badRequest("queue is required");
          }
          Fields.queueName(name.asText(), "queue");
          String namespace =
              Fields.label(Fields.optionalString(body, "namespace", ""), "namespace");
          String task = Fields.label(Fields.optionalString(body, "task", ""), "task");
          ObjectNode options = validOptions(body.get("options"));
          // a read-write token (any consumer's create()) would store later payloads in the clear
          QueueStore.Configured done =
              queues.configure(
                  name.asText(), namespace, task, options.toString(), req.grants(Access.ADMIN));
          ConfiguredQueue q = done.queue();
          // on when not asked for: kept (two configures creating the queue at once tell no before)
          if (q.options().encryptionEnabled()
              && !options.path("encryptionEnabled").asBoolean(false)) {
            log.warn(
                "queue {} keeps encrypting its payloads: a configure without the admin role left"
                    + " out options.encryptionEnabled or sent false, and only an admin switches it"
                    + " off",
                q.name());
          }
          if (done.wasEncrypted() && !q.options().encryptionEnabled()) {
            // a full replace: a client's create() sending its default false switches it off
            log.warn(
                "queue {} no longer encrypts its payloads: options.encryptionEnabled was absent or"
                    + " false in a configure, and later pushes are stored in the clear",
                q.name());
          }
          configured.run();
          Replies.json(res, 200, render(q, options.has("minPopWaitTime")));
        });
  }

  /** Only known keys with values of the right type, so the SQL casts cannot fail. */
  private ObjectNode validOptions(JsonNode raw) {
    ObjectNode clean = Json.object();
    if (raw == null || raw.isNull()) {
      return clean;
    }
    if (!raw.isObject()) {
      throw ApiException.badRequest("options must be an object");
    }
    for (String key : NON_NEGATIVE_INTS) {
      JsonNode v = raw.get(key);
      if (v != null && !v.isNull()) {
        if (!v.isIntegralNumber() || !v.canConvertToInt() || v.intValue() < 0) {
          throw ApiException.badRequest("options." + key + " must be a non-negative integer");
        }
        clean.put(key, v.intValue());
      }
    }
    JsonNode priority = raw.get("priority");
    if (priority != null && !priority.isNull()) {
      if (!priority.isIntegralNumber() || !priority.canConvertToInt()) {
        throw ApiException.badRequest("options.priority must be an integer");
      }
      clean.put("priority", priority.intValue());
    }
    for (String key : BOOLEANS) {
      JsonNode v = raw.get(key);
      if (v != null && !v.isNull()) {
        if (!v.isBoolean()) {
          throw ApiException.badRequest("options." + key + " must be a boolean");
        }
        clean.put(key, v.booleanValue());
      }
    }
    if (clean.path("encryptionEnabled").asBoolean(false) && !canEncrypt) {
      throw ApiException.badRequest(
          "options.encryptionEnabled needs QUEEN_ENCRYPTION_KEY (64 hexadecimal characters) set"
              + " on the broker");
    }
    return clean;
  }

  private static ObjectNode render(ConfiguredQueue q, boolean withMinPopWait) {
    ObjectNode body = Json.object();
    body.put("configured", true);
    body.put("queueId", q.queueId().toString());
    body.put("partitionId", q.defaultPartitionId().toString());
    body.put("queue", q.name());
    body.put("namespace", q.namespace());
    body.put("task", q.task());
    QueueOptions o = q.options();
    ObjectNode opts = body.putObject("options");
    opts.put("priority", o.priority());
    opts.put("leaseTime", o.leaseTime());
    opts.put("retryLimit", o.retryLimit());
    opts.put("retryDelay", o.retryDelay());
    opts.put("maxSize", o.maxSize());
    opts.put("ttl", o.ttl());
    opts.put("deadLetterQueue", o.deadLetterQueue());
    opts.put("dlqAfterMaxRetries", o.dlqAfterMaxRetries());
    opts.put("delayedProcessing", o.delayedProcessing());
    opts.put("windowBuffer", o.windowBuffer());
    opts.put("retentionSeconds", o.retentionSeconds());
    opts.put("completedRetentionSeconds", o.completedRetentionSeconds());
    opts.put("retentionEnabled", o.retentionEnabled());
    opts.put("encryptionEnabled", o.encryptionEnabled());
    opts.put("maxWaitTimeSeconds", o.maxWaitTimeSeconds());
    if (withMinPopWait || o.minPopWaitTime() != 0) {
      opts.put("minPopWaitTime", o.minPopWaitTime());
    }
    return body;
  }
}
