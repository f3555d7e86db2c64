package queen.server.ack;

import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import queen.server.pop.DeliveryListener;

/**
 * Remembers what each leased pop of this broker delivered, per lease and partition, so that the
 * usual ack, the whole batch at once, becomes one positional cursor advance guarded by the lease
 * instead of a lookup per message, and a lease extension finds its cursor rows by key instead of
 * scanning for the worker id (which has no index: it changes on every lease and ack, and an index
 * on it would make no cursor update HOT). An ack or extension that misses the registry (another
 * broker delivered it, this broker restarted, a partial ack) takes the general path: the registry
 * is an optimisation, never a source of truth.
 */
public final class AckRegistry {
  /** Leases older than this are dropped: their lease is long gone or was extended; acks go slow. */
  static final long MAX_AGE_NANOS = TimeUnit.MINUTES.toNanos(15);

  /** Partitions kept at most; past it new leases are not registered (their acks go slow). */
  static final int MAX_ENTRIES = 200_000;

  /** One partition's share of a leased delivery. */
  record Delivery(
      UUID partitionId,
      String queue,
      String partition,
      String group,
      Set<String> transactionIds,
      long batchEnd) {}

  /** Every partition one lease covers, registered together: never a partial view of a lease. */
  private record Lease(Map<UUID, Delivery> partitions, Set<UUID> all, long registeredNanos) {}

  private final Map<UUID, Lease> leases = new ConcurrentHashMap<>();
  private final AtomicInteger entries = new AtomicInteger();
  private final AtomicLong registrations = new AtomicLong();

  /** Registers what one leased pop delivered, every partition at once. */
  public void leased(UUID leaseId, String group, List<DeliveryListener.Leased> partitions) {
    if (registrations.incrementAndGet() % 10_000 == 0) {
      expire();
    }
    if (entries.get() + partitions.size() > MAX_ENTRIES) {
      return;
    }
    Map<UUID, Delivery> byPartition = new ConcurrentHashMap<>();
    for (DeliveryListener.Leased l : partitions) {
      byPartition.put(
          l.partitionId(),
          new Delivery(
              l.partitionId(),
              l.queue(),
              l.partition(),
              group,
              new HashSet<>(l.transactionIds()),
              l.batchEnd()));
    }
    entries.addAndGet(partitions.size());
    leases.put(
        leaseId, new Lease(byPartition, Set.copyOf(byPartition.keySet()), System.nanoTime()));
  }

  Delivery get(UUID lease, UUID partitionId) {
    Lease l = leases.get(lease);
    return l == null ? null : l.partitions().get(partitionId);
  }

  /** Every partition the lease was issued for, or null when this broker does not know it. */
  Set<UUID> partitions(UUID lease) {
    Lease l = leases.get(lease);
    return l == null ? null : l.all();
  }

  /** Forgets the acked batch of one partition; the lease stays known for extensions. */
  public void remove(UUID lease, UUID partitionId) {
    Lease l = leases.get(lease);
    if (l != null && l.partitions().remove(partitionId) != null) {
      entries.decrementAndGet();
      if (l.partitions().isEmpty()) {
        leases.remove(lease, l);
      }
    }
  }

  /** Drops leases past {@link #MAX_AGE_NANOS}; run every so many registrations. */
  void expire() {
    long now = System.nanoTime();
    leases
        .entrySet()
        .removeIf(
            e -> {
              boolean old = now - e.getValue().registeredNanos() > MAX_AGE_NANOS;
              if (old) {
                entries.addAndGet(-e.getValue().partitions().size());
              }
              return old;
            });
  }
}
