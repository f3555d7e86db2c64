package queen.client;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.Arrays;
import java.util.List;

/**
 * Acks and pushes that commit together or not at all, sent as one request. Typical use: consume
 * from one queue and produce to the next without losing or doubling a message.
 *
 * <pre>{@code
 * queen.transaction()
 *     .ack(message)
 *     .queue("invoices").partition("customer-42").push(Map.of("total", 12))
 *     .commit();
 * }</pre>
 *
 * <p>An ack of a leased message carries its lease: once the lease ran out the transaction is
 * refused and applies nothing, for the message goes out again and its next handler commits its own
 * transaction (without the lease, both were applied and the pushes doubled). A message popped with
 * autoAck has no lease and was consumed by its pop: its ack always succeeds and changes nothing (so
 * the pushes of two transactions acking it are both applied; give them transactionIds derived from
 * the message's to make the second a duplicate), and {@code failed} or {@code dlq} writes no dead
 * letter. Of a leased message, {@code failed} and {@code dlq} dead-letter at once.
 */
public final class Transaction {
  private final Queen queen;
  private final ArrayNode operations = Json.MAPPER.createArrayNode();
  private String queue;
  private String partition = "Default";
  private String key;

  Transaction(Queen queen) {
    this.queen = queen;
  }

  /** Acks messages as {@code completed} in their own consumer group. */
  public Transaction ack(Message... messages) {
    return ack(Arrays.asList(messages), "completed");
  }

  /** Acks messages with a status ({@code completed}, {@code failed} or {@code dlq}). */
  public Transaction ack(List<Message> messages, String status) {
    for (Message m : messages) {
      if (m.transactionId() == null || m.partitionId() == null) {
        throw new IllegalArgumentException(
            "a message needs transactionId and partitionId to be acked: " + m);
      }
      ObjectNode op = operations.addObject();
      op.put("type", "ack");
      op.put("transactionId", m.transactionId());
      op.put("partitionId", m.partitionId());
      op.put("status", status);
      op.put("consumerGroup", m.consumerGroup());
      if (!m.leaseId().isEmpty()) {
        op.put("leaseId", m.leaseId());
      }
      keyOf(m.queue() + ":" + m.partition() + ":" + m.consumerGroup());
    }
    return this;
  }

  /** The queue the next {@link #push} goes to. */
  public Transaction queue(String name) {
    this.queue = name;
    this.partition = "Default";
    return this;
  }

  /** The partition the next {@link #push} goes to ({@code Default}). */
  public Transaction partition(String name) {
    this.partition = name;
    return this;
  }

  /** Pushes each argument as one item; see {@link #push(List)}. */
  public Transaction push(Object... items) {
    return push(Arrays.asList(items));
  }

  /**
   * Pushes the items (as {@link QueueBuilder#push(List)} takes them) to the current queue: without
   * this overload a list was one message whose payload was the list.
   */
  public Transaction push(List<?> items) {
    if (queue == null) {
      throw new IllegalStateException("call queue(name) before push in a transaction");
    }
    ObjectNode op = operations.addObject();
    op.put("type", "push");
    ArrayNode array = op.putArray("items");
    for (Object item : items) {
      array.add(PushItems.envelope(queue, partition, item));
    }
    keyOf(queue + ":" + partition);
    return this;
  }

  /**
   * Sends the transaction and answers the broker's result ({@code transactionId}, {@code results});
   * throws {@link QueenException} if the broker rolled it back. A commit the client had to send
   * again (its first answer lost to a timeout or a broker restart) may find that first attempt
   * committed: its pushes' transaction ids are then stored, and the repeat is rolled back as a
   * duplicate push; the exception then says that the transaction may have been committed, not that
   * it was rolled back. Nothing is applied twice; check for the pushed messages before building the
   * transaction anew, since a new one carries new transaction ids.
   */
  public JsonNode commit() {
    if (operations.isEmpty()) {
      throw new IllegalStateException("Transaction has no operations to commit");
    }
    ObjectNode body = Json.MAPPER.createObjectNode();
    body.set("operations", operations);
    body.putArray("requiredLeases");
    Transport.Answer sent =
        queen.transport.send(Transport.Call.post("/api/v1/transaction", body, key));
    JsonNode answer = sent.body();
    if (!answer.path("success").asBoolean(false)) {
      String why = answer.path("error").asText("no reason given");
      // refused on a repeat: "rolled back" said nothing was applied, and a caller that built the
      // transaction anew stored its pushes twice
      throw new QueenException(
          200,
          sent.repeated()
              ? "transaction refused when sent again after an attempt whose answer was lost,"
                  + " which may have committed it: "
                  + why
              : "transaction rolled back: " + why);
    }
    return answer;
  }

  private void keyOf(String k) {
    if (key == null) {
      key = k;
    }
  }
}
