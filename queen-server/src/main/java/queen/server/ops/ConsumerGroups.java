package queen.server.ops;

import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.TreeMap;
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

  /**
   * How long the feed keeps reading a reset it applied. Ids are taken at insert and become visible
   * at commit, so a reset may commit after one with a higher id was read; a reset commits right
   * after its insert (the last statement of its call), far within this.
   */
  static final Duration SETTLE = Duration.ofMinutes(1);

  private final ConsumerGroupStore store;
  private final ResetListener listener;
  private final Runnable announce;
  private final long settleNanos;

  /** Every reset with an id at or below it was applied, or can no longer commit. */
  private long floor;

  /** The resets above the floor already applied: id to when (System.nanoTime()). */
  private final TreeMap<Long, Long> applied = new TreeMap<>();

  /** {@code announce} runs after a reset made through this broker, for the other brokers. */
  public ConsumerGroups(ConsumerGroupStore store, ResetListener listener, Runnable announce) {
    this(store, listener, announce, SETTLE);
  }

  ConsumerGroups(
      ConsumerGroupStore store, ResetListener listener, Runnable announce, Duration settle) {
    this.store = store;
    this.listener = listener;
    this.announce = announce;
    this.settleNanos = settle.toNanos();
  }

  /** Follows the feed from its current head: older resets are already in every cursor. */
  public synchronized void start() {
    floor = store.resetsHead();
  }

  /** The feed is read above this id. */
  synchronized long floor() {
    return floor;
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

  /**
   * Applies the resets read from the feed that were not applied yet (this broker's own among them,
   * harmlessly again). A reset stays above the floor for {@link #SETTLE} after it was applied, so
   * one with a lower id that commits later is still read: moving the floor to the highest id read
   * skipped it, and the brokers kept their view of that group until it was dropped for another
   * reason.
   */
  synchronized void apply(List<ConsumerGroupStore.Reset> resets) {
    long now = System.nanoTime();
    for (ConsumerGroupStore.Reset r : resets) {
      if (r.id() > floor && !applied.containsKey(r.id())) {
        listener.groupReset(r.queue(), r.group());
        applied.put(r.id(), now); // after: a reset whose listener failed is read again
      }
    }
    while (!applied.isEmpty() && now - applied.firstEntry().getValue() >= settleNanos) {
      floor = applied.pollFirstEntry().getKey();
    }
  }
}
