package queen.server.http;

import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.UUID;
import queen.server.ack.TransactionService;
import queen.server.http.auth.Access;
import queen.server.ops.Statistics;
import queen.server.push.PushResult;
import queen.server.store.AckOutcome;

/**
 * {@code POST /api/v1/transaction}. A malformed request is a 400; a transaction refused for a
 * business reason (unknown message, stale lease, stored transactionId, unknown operation type) is a
 * 200 with {@code success:false}, and nothing of it is applied. Its pushes cannot be buffered (they
 * commit with its acks): in push maintenance they go straight to PostgreSQL, since WIRE.md answers
 * a transaction 200 always, and may land before buffered pushes of their partitions.
 */
public final class TransactionRoutes implements Routes {
  private final TransactionService transactions;
  private final Statistics stats;
  private final PushLimits limits;

  public TransactionRoutes(TransactionService transactions, Statistics stats, PushLimits limits) {
    this.transactions = transactions;
    this.stats = stats;
    this.limits = limits;
  }

  @Override
  public void declare(RouteTable rules) {
    rules.post(
        "/api/v1/transaction",
        Access.READ_WRITE,
        (req, res) -> {
          byte[] body = req.body();
          String id = UUID.randomUUID().toString();
          List<TransactionService.AckOp> acks = new ArrayList<>();
          List<TransactionService.PushOp> pushes = new ArrayList<>();
          TransactionBody.Read read = TransactionBody.read(body, Gate.subject(req), limits);
          String onlyLease = onlyLease(read.requiredLeases());
          for (TransactionBody.Operation op : read.operations()) {
            String type = op.fields().path("type").asText("");
            switch (type) {
              case "ack" -> acks.add(ack(op, onlyLease));
              case "push" -> {
                if (op.items() == null) {
                  throw ApiException.badRequest("items array is required" + op.at());
                }
                for (var item : op.items()) {
                  pushes.add(new TransactionService.PushOp(op.index(), item));
                }
              }
              default -> {
                Replies.json(res, 200, failure(id, "Unknown operation type: " + type));
                return;
              }
            }
          }
          TransactionService.Outcome o = transactions.commit(acks, pushes);
          if (!o.success()) {
            Replies.json(res, 200, failure(id, o.error()));
            return;
          }
          ObjectNode out = Json.object().put("transactionId", id).put("success", true);
          List<ObjectNode> results = new ArrayList<>(acks.size() + pushes.size());
          for (int k = 0; k < acks.size(); k++) {
            AckOutcome a = o.acks().get(k);
            if (a.success()) {
              stats.acknowledged(a.queueName(), acks.get(k).ack().status(), a.dlq());
            }
            results.add(Json.object());
            results
                .getLast()
                .put("index", acks.get(k).op())
                .put("type", "ack")
                .put("success", a.success())
                .put("transactionId", acks.get(k).ack().transactionId())
                .putNull("error")
                .put("dlq", a.dlq());
          }
          for (int k = 0; k < pushes.size(); k++) {
            PushResult p = o.pushes().get(k);
            results.add(Json.object());
            results
                .getLast()
                .put("index", pushes.get(k).op())
                .put("type", "push")
                .put("success", true)
                .put("transactionId", p.transactionId())
                .put("messageId", p.messageId().toString())
                .put("partitionId", p.partitionId().toString())
                .put("queueName", p.queue());
          }
          // in the order of the operations, as WIRE.md lists them (stable: a push's items in turn)
          results.sort(Comparator.comparingInt(n -> n.get("index").intValue()));
          out.putArray("results").addAll(results);
          Replies.json(res, 200, out);
        });
  }

  /**
   * The lease of {@code requiredLeases} when it names one only (repeated or not) and it is a lease
   * id, else null: a value the broker could not have issued is ignored, as the field was.
   */
  private static String onlyLease(List<String> required) {
    return required.stream().distinct().count() == 1 && Fields.isUuid(required.getFirst())
        ? required.getFirst()
        : null;
  }

  /**
   * An ack operation. One that names no lease, in a transaction whose {@code requiredLeases} name
   * one lease, is that lease's ack: Queen's clients send the leases of the messages they ack there
   * and not in the operations. Without a consumer group its lease decides the group, as on the ack
   * route: Queen's clients send the group only when the caller repeats it, so a consumer of a named
   * group had every such transaction refused as queue mode's ack. With a group, where that lease
   * may be the group's on the partition ({@link TransactionService}). With several leases, or none,
   * the named group's lease-less ack, or else queue mode's.
   */
  private static TransactionService.AckOp ack(TransactionBody.Operation operation, String lease) {
    ObjectNode op = operation.fields();
    String at = operation.at();
    if (!op.path("transactionId").isTextual()) {
      throw ApiException.badRequest("transactionId is required" + at);
    }
    if (!op.path("partitionId").isTextual()) {
      throw ApiException.badRequest("partitionId is required" + at);
    }
    String group = Fields.optionalString(op, "consumerGroup", "", at);
    boolean ownLease = !Fields.optionalString(op, "leaseId", "", at).isEmpty();
    if (!group.isEmpty()) {
      // checked under the lease too (TransactionService decides where it applies): lease-less, a
      // consumer whose lease had expired and whose message went to another forwarded it a second
      // time beside the live one's transaction
      return new TransactionService.AckOp(
          operation.index(),
          Fields.name(group, "consumerGroup" + at),
          AckRoutes.request(op, at, null),
          ownLease || lease == null ? null : UUID.fromString(lease));
    }
    ObjectNode fields = ownLease || lease == null ? op : op.deepCopy().put("leaseId", lease);
    // null: the lease decides, as on the ack route
    String decided = ownLease || lease != null ? null : PopRoutes.QUEUE_MODE;
    return new TransactionService.AckOp(
        operation.index(), decided, AckRoutes.request(fields, at, null), null);
  }

  private static ObjectNode failure(String id, String error) {
    ObjectNode out = Json.object().put("transactionId", id).put("success", false);
    out.put("error", error);
    out.putArray("results");
    return out;
  }
}
