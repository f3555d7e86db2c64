package queen.server.http;

import com.fasterxml.jackson.core.JsonGenerator;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.Optional;
import java.util.UUID;
import queen.server.ack.DeadLetterService;
import queen.server.http.auth.Access;
import queen.server.store.DeadLetter;
import queen.server.store.DeadLetterStore;

/**
 * {@code GET /api/v1/dlq} (newest first, the payload under {@code data}, with {@code total}) and
 * {@code POST /api/v1/messages/:partitionId/:transactionId/retry}, the operator's way back.
 */
public final class DeadLetterRoutes implements Routes {
  private static final int MAX_OFFSET = 100_000;

  private final DeadLetterService letters;
  private final Payloads payloads;

  public DeadLetterRoutes(DeadLetterService letters, Payloads payloads) {
    this.letters = letters;
    this.payloads = payloads;
  }

  @Override
  public void declare(RouteTable rules) {
    rules.get(
        "/api/v1/dlq",
        Access.READ_ONLY,
        (req, res) -> {
          Params p = new Params(req);
          int limit = p.limit(100, 1000);
          // past it, each page read every dead letter before it; the filters narrow a search
          int offset = p.offset(MAX_OFFSET);
          Instant from = p.timestamp("from");
          Instant to = p.timestamp("to");
          TimeWindow.ordered(from, to);
          DeadLetterStore.Filter filter =
              new DeadLetterStore.Filter(
                  p.optional("queue"),
                  p.optional("consumerGroup"),
                  p.optional("partition"),
                  from,
                  to);
          Replies.json(res, 200, render(letters.list(filter, limit, offset), limit, offset));
        });
    rules.post(
        "/api/v1/messages/{partitionId}/{transactionId}/retry",
        Access.READ_WRITE,
        (req, res) -> {
          Params p = new Params(req);
          UUID pid = Fields.uuid(p.path("partitionId"), "partitionId");
          String txn = p.path("transactionId");
          Optional<DeadLetterStore.Requeued> r;
          try {
            r = letters.requeue(pid, txn);
          } catch (DeadLetterStore.Unsettled e) {
            Replies.error(res, 409, e.getMessage());
            return;
          }
          if (r.isEmpty()) {
            Replies.error(res, 404, "Dead letter not found");
            return;
          }
          Replies.json(
              res,
              200,
              Json.object()
                  .put("success", true)
                  .put("partitionId", pid.toString())
                  .put("transactionId", txn)
                  .put("requeuedTransactionId", r.get().transactionId())
                  .put("offset", r.get().offset()));
        });
  }

  private byte[] render(DeadLetterStore.Page page, int limit, int offset) {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    try (JsonGenerator g = Json.MAPPER.getFactory().createGenerator(out)) {
      g.writeStartObject();
      g.writeArrayFieldStart("messages");
      for (DeadLetter d : page.letters()) {
        g.writeStartObject();
        g.writeStringField("id", d.messageId().toString());
        g.writeStringField("transactionId", d.transactionId());
        g.writeStringField("partitionId", d.partitionId().toString());
        g.writeStringField("queue", d.queue());
        g.writeStringField("partition", d.partition());
        g.writeStringField("consumerGroup", d.group());
        g.writeStringField("errorMessage", d.error());
        g.writeNumberField("retryCount", d.retryCount());
        Payloads.Listed data = payloads.listed(d.flags(), d.payload());
        g.writeFieldName("data");
        if (data.plain() == null) {
          g.writeNull();
          g.writeStringField("payloadError", data.error());
        } else {
          g.writeRawValue(new String(data.plain(), StandardCharsets.UTF_8));
        }
        g.writeStringField("traceId", d.traceId() == null ? null : d.traceId().toString());
        g.writeStringField("producerSub", d.producerSub());
        g.writeStringField("createdAt", Json.millis(d.createdAt()));
        g.writeStringField("failedAt", Json.millis(d.failedAt()));
        g.writeEndObject();
      }
      g.writeEndArray();
      g.writeObjectFieldStart("pagination");
      g.writeNumberField("limit", limit);
      g.writeNumberField("offset", offset);
      g.writeEndObject();
      g.writeNumberField("total", page.total());
      g.writeEndObject();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    return out.toByteArray();
  }
}
