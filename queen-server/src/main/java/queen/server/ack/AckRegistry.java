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
import queen.server.store.AckOutcome;

/**
 * Remembers what each leased pop of this broker delivered, per lease and partition, so that the
 * usual ack, the whole batch at once, becomes one positional cursor advance guarded by the lease
 * instead of a lookup per message, and a lease extension finds its cursor rows by key instead of
 * scanning for the worker id (which has no index: it changes on every lease and ack, and an index
 * on it would make no cursor update HOT). An ack or extension that misses the registry (another
 * broker delivered it, this broker restarted, a partial ack) takes the general path: the registry
 * is an optimisation, never a source of truth. One decision reads it besides: whether a
 * transaction's one required lease applies to an ack that names its group ({@code
 * TransactionService}), where a lease it does not know is applied, the strict answer.
 */
public final class AckRegistry {
  /** Leases older than this are dropped: their lease is long gone or was extended; acks go slow. */
  static final long MAX_AGE_NANOS = TimeUnit.MINUTES.toNanos(15);

  /** Partitions kept at most; past it new leases are not registered (their acks go slow). */
  static final int MAX_ENTRIES = 200_000;

  /**
   * TransactionIds kept at most, about 30 MB; past it likewise. Leases whose acks this broker does
   * not hear of (hints off or lost, consumers gone) stay until they expire, and at 200,000
   * partitions of batches of 100 they held 20 million ids, more than a default heap.
   */
  static final int MAX_IDS = 250_000;

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

  /** The lease last registered per (partition, group): one batch of a pair is leased at a time. */
  private record Holder(UUID partitionId, String group) {}

  private final Map<Holder, UUID> holders = new ConcurrentHashMap<>();

  /** The same by names, as other brokers' hints of their releases name a partition. */
  private record Named(String queue, String partition, String group) {}

  private record Held(UUID lease, UUID partitionId) {}

  private final Map<Named, Held> named = new ConcurrentHashMap<>();
  private final AtomicInteger entries = new AtomicInteger();
  private final AtomicLong ids = new AtomicLong();
  private final AtomicLong registrations = new AtomicLong();

  /** Registers what one leased pop delivered, every partition at once. */
  public void leased(UUID leaseId, String group, List<DeliveryListener.Leased> partitions) {
    if (registrations.incrementAndGet() % 10_000 == 0) {
      expire();
    }
    long count = 0;
    for (DeliveryListener.Leased l : partitions) {
      count += l.transactionIds().size();
    }
    if (entries.get() + partitions.size() > MAX_ENTRIES || ids.get() + count > MAX_IDS) {
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
    ids.addAndGet(count);
    leases.put(
        leaseId, new Lease(byPartition, Set.copyOf(byPartition.keySet()), System.nanoTime()));
    for (Delivery d : byPartition.values()) {
      holders.put(new Holder(d.partitionId(), group), leaseId);
      named.put(named(d), new Held(leaseId, d.partitionId()));
    }
  }

  private static Named named(Delivery d) {
    return new Named(d.queue(), d.partition(), d.group());
  }

  /**
   * Another broker ended the group's lease on the partition: forgets it here, which only expiry
   * removed before, so that acks through a load balancer in front of several brokers kept the
   * registry full of leases acked elsewhere and new leases off the fast path. {@code lease}: the
   * lease that ended, or null when the acks named none (a transaction's) or the hint came from a
   * broker from before hints named it; then the lease registered for the pair goes, even one this
   * broker issued since (its ack takes the general path).
   */
  public void releasedElsewhere(String queue, String partition, String group, UUID lease) {
    Named pair = new Named(queue, partition, group);
    if (lease != null) {
      Lease ended = leases.get(lease);
      if (ended != null) {
        ended.partitions().values().stream()
            .filter(d -> named(d).equals(pair))
            .toList()
            .forEach(d -> remove(lease, d.partitionId()));
      }
    }
    Held h = named.get(pair);
    // one lease of a pair at a time: a lease issued before the one that ended has ended too (it
    // expired), and one issued after it is live. Lease ids are UUIDv7, ordered by their millisecond
    if (h != null && (lease == null || !issuedAfter(h.lease(), lease))) {
      remove(h.lease(), h.partitionId());
    }
  }

  /**
   * The group's cursors on the queue (every queue when null) were deleted or moved, which ended
   * their leases: their deliveries go, where they stayed until they expired and could fill the
   * registry after a seek of a wide queue, keeping new leases off the fast path.
   */
  public void groupReset(String queue, String group) {
    named.forEach(
        (pair, held) -> {
          if (pair.group().equals(group) && (queue == null || pair.queue().equals(queue))) {
            remove(held.lease(), held.partitionId());
          }
        });
  }

  /** Whether UUIDv7 {@code a} was minted in a later millisecond than {@code b}. */
  private static boolean issuedAfter(UUID a, UUID b) {
    return (a.getMostSignificantBits() >>> 16) > (b.getMostSignificantBits() >>> 16);
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

  /** Forgets the acked batch of one partition; the lease stays known while it has another. */
  public void remove(UUID lease, UUID partitionId) {
    Lease l = leases.get(lease);
    Delivery d = l == null ? null : l.partitions().remove(partitionId);
    if (d != null) {
      holders.remove(new Holder(partitionId, d.group()), lease);
      named.remove(named(d), new Held(lease, partitionId));
      entries.decrementAndGet();
      ids.addAndGet(-d.transactionIds().size());
      if (l.partitions().isEmpty()) {
        leases.remove(lease, l);
      }
    }
  }

  /**
   * Forgets the partitions whose lease these acks ended, {@code leases[i]} being outcome i's lease
   * or null (Queen's transactions send none: then the pair's registered lease). Acks one message at
   * a time take the general path, as transactions do; kept until they expired, their batches held
   * up to {@link #MAX_ENTRIES} partitions with every transactionId of each batch, and then kept new
   * leases off the fast path.
   */
  void ended(List<AckOutcome> outcomes, UUID[] leases) {
    for (int i = 0; i < outcomes.size(); i++) {
      AckOutcome o = outcomes.get(i);
      if (o == null || !o.leaseEnded()) {
        continue;
      }
      UUID lease =
          leases[i] != null ? leases[i] : holders.get(new Holder(o.partitionId(), o.group()));
      if (lease != null) {
        remove(lease, o.partitionId());
      }
    }
  }

  /** Partitions of leased deliveries registered now (the gauge queen_ack_registry_partitions). */
  public int size() {
    return entries.get();
  }

  /** TransactionIds of leased deliveries registered now. */
  long ids() {
    return ids.get();
  }

  /** Drops leases past {@link #MAX_AGE_NANOS}; run every so many registrations. */
  void expire() {
    long now = System.nanoTime();
    for (Map.Entry<UUID, Lease> e : leases.entrySet()) {
      Lease l = e.getValue();
      if (now - l.registeredNanos() <= MAX_AGE_NANOS) {
        continue;
      }
      // one partition at a time, as remove() takes them: a delivery is counted off once
      for (UUID pid : l.all()) {
        remove(e.getKey(), pid);
      }
      leases.remove(e.getKey(), l);
    }
  }
}
