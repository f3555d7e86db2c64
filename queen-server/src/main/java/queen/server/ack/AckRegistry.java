package queen.server.ack;

import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Remembers what each leased pop of this broker delivered, per (lease, partition), so that the
 * usual ack, the whole batch at once, becomes one positional cursor advance guarded by the lease
 * instead of a lookup per message. An ack that misses the registry (another broker delivered it,
 * this broker restarted, a partial ack) takes the general path, which resolves transaction ids to
 * offsets itself: the registry is an optimisation, never a source of truth.
 */
public final class AckRegistry {
  /**
   * Entries older than this are dropped: their lease is long gone or was extended; acks go slow.
   */
  static final long MAX_AGE_NANOS = TimeUnit.MINUTES.toNanos(15);

  /** Entries kept at most; past it new deliveries are not registered (their acks go slow). */
  static final int MAX_ENTRIES = 200_000;

  /** One partition's share of a leased delivery. */
  record Delivery(
      UUID partitionId,
      String queue,
      String partition,
      String group,
      Set<String> transactionIds,
      long batchEnd,
      long registeredNanos) {}

  private record Key(UUID lease, UUID partitionId) {}

  private final Map<Key, Delivery> entries = new ConcurrentHashMap<>();
  private final AtomicLong registrations = new AtomicLong();

  /** A leased pop delivered these messages (in offset order, ending at batchEnd) of a partition. */
  public void register(
      UUID lease,
      UUID partitionId,
      String queue,
      String partition,
      String group,
      List<String> transactionIds,
      long batchEnd) {
    if (registrations.incrementAndGet() % 10_000 == 0) {
      expire();
    }
    if (entries.size() >= MAX_ENTRIES) {
      return;
    }
    entries.put(
        new Key(lease, partitionId),
        new Delivery(
            partitionId,
            queue,
            partition,
            group,
            new HashSet<>(transactionIds),
            batchEnd,
            System.nanoTime()));
  }

  Delivery get(UUID lease, UUID partitionId) {
    return entries.get(new Key(lease, partitionId));
  }

  void remove(UUID lease, UUID partitionId) {
    entries.remove(new Key(lease, partitionId));
  }

  /** Drops entries past {@link #MAX_AGE_NANOS}; run every so many registrations. */
  void expire() {
    long now = System.nanoTime();
    entries.values().removeIf(d -> now - d.registeredNanos() > MAX_AGE_NANOS);
  }
}
