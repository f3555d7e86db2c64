package queen.bench;

import java.util.List;

/**
 * A message system a scenario drives: the broker over HTTP, or a baseline doing the same work
 * straight over JDBC. Every method is one round trip, and is called from many threads at once.
 */
interface Target extends AutoCloseable {
  /** broker, naive or ceiling. */
  String name();

  /** Starts the queue empty with this many partitions, named p0..p(n-1). */
  void prepare(String queue, int partitions) throws Exception;

  /** Stores the messages (one request, maybe several partitions). */
  void push(String queue, List<Message> batch) throws Exception;

  /**
   * Takes up to {@code batch} messages of one partition for a group, leased unless autoAck, waiting
   * up to {@code waitMillis} for some; null when there were none.
   */
  Delivery pop(String queue, String group, int batch, boolean autoAck, long waitMillis)
      throws Exception;

  /** Acknowledges a whole delivery as processed. */
  void ack(Delivery delivery) throws Exception;

  /** One message to push: its partition, a unique id and its JSON payload. */
  record Message(String partition, String id, byte[] payload) {}

  /** What a pop delivered, with what its ack needs. */
  record Delivery(String group, List<Delivered> messages, Object ackHandle) {
    int size() {
      return messages.size();
    }
  }

  /** One delivered message: its id and partition, and the send time written into it. */
  record Delivered(String id, String partitionId, long sentNanos) {}
}
