package queen.server.ops;

import java.time.Instant;
import java.util.List;
import queen.server.store.ConsumerGroupStore;

/**
 * Deletes and seeks of consumer groups, and the feed that carries them to every broker: after the
 * cursors change in PostgreSQL, this broker drops its cached view of the group at once, and every
 * other broker does when its {@link StateRefresher} next reads the feed (every {@code
 * QUEEN_STATE_REFRESH_MS}, in the same query as the other shared state), so the next pop anywhere
 * starts from the new cursors.
 */
public final class ConsumerGroups {
  /** Told that a group's cursors on a queue (every queue when null) moved. */
  @FunctionalInterface
  public interface ResetListener {
    void groupReset(String queue, String group);
  }

  private final ConsumerGroupStore store;
  private final ResetListener listener;
  private final Runnable announce;
  private long seen;

  /** {@code announce} runs after a reset made through this broker, for the other brokers. */
  public ConsumerGroups(ConsumerGroupStore store, ResetListener listener, Runnable announce) {
    this.store = store;
    this.listener = listener;
    this.announce = announce;
  }

  /** Follows the feed from its current head: older resets are already in every cursor. */
  public synchronized void start() {
    seen = store.resetsHead();
  }

  /** The id of the last reset applied. */
  synchronized long seen() {
    return seen;
  }

  public ConsumerGroupStore.Deleted delete(String group, String queue, boolean deleteMetadata) {
    ConsumerGroupStore.Deleted d = store.delete(group, queue, deleteMetadata);
    if (d.queueFound()) {
      listener.groupReset(queue, group);
      announce.run();
    }
    return d;
  }

  /** Seeks every cursor of the group on the queue to the end ({@code at} null) or to {@code at}. */
  public ConsumerGroupStore.Sought seek(String group, String queue, Instant at) {
    ConsumerGroupStore.Sought s = store.seek(group, queue, at);
    if (s.queueFound()) {
      listener.groupReset(queue, group);
      announce.run();
    }
    return s;
  }

  public ConsumerGroupStore.PartitionSought seekPartitionToEnd(
      String group, String queue, String partition) {
    ConsumerGroupStore.PartitionSought s = store.seekPartitionToEnd(group, queue, partition);
    if (s.cursor() != null) {
      listener.groupReset(queue, group);
      announce.run();
    }
    return s;
  }

  /** Applies resets read from the feed (this broker's own among them, harmlessly again). */
  synchronized void apply(List<ConsumerGroupStore.Reset> resets) {
    for (ConsumerGroupStore.Reset r : resets) {
      if (r.id() > seen) {
        listener.groupReset(r.queue(), r.group());
        seen = r.id();
      }
    }
  }
}
