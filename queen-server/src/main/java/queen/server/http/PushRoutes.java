package queen.server.http;

import java.util.List;
import queen.server.http.auth.Access;
import queen.server.push.BufferedPush;
import queen.server.push.PushResult;

/**
 * {@code POST /api/v1/push}: validates every item before anything is written (see {@link
 * PushBody}), then answers a bare array in input order (the clients pair results with items by
 * position): 201 when something was stored, 200 when every item was a duplicate.
 */
public final class PushRoutes implements Routes {
  private final BufferedPush push;
  private final PushLimits limits;

  public PushRoutes(BufferedPush push, PushLimits limits) {
    this.push = push;
    this.limits = limits;
  }

  @Override
  public void declare(RouteTable rules) {
    rules.post(
        "/api/v1/push",
        Access.READ_WRITE,
        (req, res) -> {
          byte[] body = req.body();
          List<PushResult> results = push.push(PushBody.read(body, Gate.subject(req), limits));
          boolean stored =
              results.isEmpty()
                  || results.stream().anyMatch(r -> r.status() != PushResult.Status.DUPLICATE);
          Replies.json(res, stored ? 201 : 200, render(results));
        });
  }

  private static byte[] render(List<PushResult> results) {
    JsonBytes out = new JsonBytes(8 + results.size() * 240);
    out.ascii("[");
    for (int i = 0; i < results.size(); i++) {
      PushResult r = results.get(i);
      out.ascii(i == 0 ? "{\"index\":" : ",{\"index\":").number(i);
      out.ascii(",\"transaction_id\":").string(r.transactionId());
      out.ascii(",\"message_id\":").uuid(r.messageId());
      if (r.status() == PushResult.Status.QUEUED) {
        out.ascii(",\"status\":\"queued\",\"partition_id\":").uuid(r.partitionId());
        out.ascii(",\"trace_id\":").uuid(r.traceId());
      } else if (r.status() == PushResult.Status.BUFFERED) {
        out.ascii(",\"status\":\"buffered\",\"transactionId\":").string(r.transactionId());
        out.ascii(",\"trace_id\":").uuid(r.traceId());
      } else {
        out.ascii(",\"status\":\"duplicate\"");
      }
      out.ascii(",\"queueName\":").string(r.queue()).ascii("}");
    }
    return out.ascii("]").toBytes();
  }
}
