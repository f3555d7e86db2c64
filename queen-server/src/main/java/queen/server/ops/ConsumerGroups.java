package queen.server.ops;

import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.concurrent.ScheduledExecutorService;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import queen.server.store.ConsumerGroupStore;

/**
 * Deletes and seeks of consumer groups, and the feed that carries them to every broker: after the
 * cursors change in PostgreSQL, this broker drops its cached view of the group at once, and every
 * other broker does when it next reads the feed (every {@code QUEEN_STATE_REFRESH_MS}), so the next
 * pop anywhere starts from the new cursors.
 */
public final class ConsumerGroups implements AutoCloseable {
  private static final Logger log = LoggerFactory.getLogger(ConsumerGroups.class);

  /** Told that a group's cursors on a queue (every queue when null) moved. */
  @FunctionalInterface
  public interface ResetListener {
    void groupReset(String queue, String group);
  }

  private final ConsumerGroupStore store;
  private final ResetListener listener;
  private final Duration interval;
  private long seen;
  private ScheduledExecutorService timer;

  public ConsumerGroups(ConsumerGroupStore store, ResetListener listener, Duration interval) {
    this.store = store;
    this.listener = listener;
    this.interval = interval;
  }

  /** Starts following the feed from its current head. */
  public synchronized void start() {
    seen = store.resetsHead();
    if (timer == null) {
      timer = Periodic.every("queen-group-resets", interval, this::followQuietly);
    }
  }

  public ConsumerGroupStore.Deleted delete(String group, String queue, boolean deleteMetadata) {
    ConsumerGroupStore.Deleted d = store.delete(group, queue, deleteMetadata);
    if (d.queueFound()) {
      listener.groupReset(queue, group);
    }
    return d;
  }

  /** Seeks every cursor of the group on the queue to the end ({@code at} null) or to {@code at}. */
  public ConsumerGroupStore.Sought seek(String group, String queue, Instant at) {
    ConsumerGroupStore.Sought s = store.seek(group, queue, at);
    if (s.queueFound()) {
      listener.groupReset(queue, group);
    }
    return s;
  }

  public ConsumerGroupStore.PartitionSought seekPartitionToEnd(
      String group, String queue, String partition) {
    ConsumerGroupStore.PartitionSought s = store.seekPartitionToEnd(group, queue, partition);
    if (s.cursor() != null) {
      listener.groupReset(queue, group);
    }
    return s;
  }

  /** Applies the resets other brokers announced since the last look. */
  synchronized void follow() {
    List<ConsumerGroupStore.Reset> resets = store.resetsAfter(seen);
    for (ConsumerGroupStore.Reset r : resets) {
      listener.groupReset(r.queue(), r.group());
      seen = r.id();
    }
  }

  private void followQuietly() {
    try {
      follow();
    } catch (RuntimeException e) {
      log.warn(
          "reading consumer-group resets failed, retrying in {}: {}", interval, e.getMessage());
    }
  }

  @Override
  public synchronized void close() {
    if (timer != null) {
      timer.shutdownNow();
      timer = null;
    }
  }
}
