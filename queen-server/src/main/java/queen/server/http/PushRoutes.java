package queen.server.http;

import com.fasterxml.jackson.core.JsonGenerator;
import io.helidon.webserver.http.HttpRules;
import io.helidon.webserver.http.HttpService;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.List;
import queen.server.push.PushResult;
import queen.server.push.PushService;

/**
 * {@code POST /api/v1/push}: validates every item before anything is written (see {@link
 * PushBody}), then answers a bare array in input order (the clients pair results with items by
 * position): 201 when something was stored, 200 when every item was a duplicate.
 */
public final class PushRoutes implements HttpService {
  private final PushService push;

  public PushRoutes(PushService push) {
    this.push = push;
  }

  @Override
  public void routing(HttpRules rules) {
    rules.post(
        "/api/v1/push",
        (req, res) -> {
          byte[] body = req.content().hasEntity() ? req.content().as(byte[].class) : new byte[0];
          List<PushResult> results = push.push(PushBody.read(body));
          boolean stored =
              results.isEmpty()
                  || results.stream().anyMatch(r -> r.status() == PushResult.Status.QUEUED);
          Replies.json(res, stored ? 201 : 200, render(results));
        });
  }

  private static byte[] render(List<PushResult> results) {
    ByteArrayOutputStream out = new ByteArrayOutputStream(64 + results.size() * 240);
    try (JsonGenerator g = Json.MAPPER.getFactory().createGenerator(out)) {
      g.writeStartArray();
      for (int i = 0; i < results.size(); i++) {
        PushResult r = results.get(i);
        g.writeStartObject();
        g.writeNumberField("index", i);
        g.writeStringField("transaction_id", r.transactionId());
        g.writeStringField("message_id", r.messageId().toString());
        if (r.status() == PushResult.Status.QUEUED) {
          g.writeStringField("status", "queued");
          g.writeStringField("partition_id", r.partitionId().toString());
          g.writeStringField("trace_id", r.traceId() == null ? null : r.traceId().toString());
        } else {
          g.writeStringField("status", "duplicate");
        }
        g.writeStringField("queueName", r.queue());
        g.writeEndObject();
      }
      g.writeEndArray();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    return out.toByteArray();
  }
}
