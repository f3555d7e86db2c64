package queen.server.pop;

/** Which partitions a pop may take from: the three routes of the wire contract. */
public sealed interface PopTarget {
  /** {@code GET /pop/queue/:queue/partition/:partition}. */
  record Partition(String queue, String partition) implements PopTarget {}

  /** {@code GET /pop/queue/:queue}: any partition of the queue. */
  record Queue(String queue) implements PopTarget {}

  /** {@code GET /pop?namespace=&task=}: any partition of any matching queue (null matches any). */
  record Discovery(String namespace, String task) implements PopTarget {}
}
