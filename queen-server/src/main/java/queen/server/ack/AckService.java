package queen.server.ack;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import queen.server.pop.DeliveryListener;
import queen.server.store.AckItem;
import queen.server.store.AckOutcome;
import queen.server.store.AckStore;
import queen.server.store.BatchAck;

/**
 * Applies acknowledgements. A lease id that is not even a UUID cannot name a live lease: it is
 * refused here, per item, like any stale lease, without a database round trip.
 */
public final class AckService {
  static final String INVALID_LEASE = "Invalid or expired lease";

  private final AckStore store;
  private final AckCommit commit;
  private final AckRegistry registry;
  private final ReleaseListener listener;

  /**
   * @param concurrency merged ack statements running at once; acks that arrive meanwhile go
   *     together into the next one
   */
  public AckService(
      AckStore store, AckRegistry registry, ReleaseListener listener, int concurrency) {
    this.store = store;
    this.commit = new AckCommit(store, concurrency);
    this.registry = registry;
    this.listener = listener;
  }

  /**
   * Acknowledges, under the lease, messages a pop claimed but did not deliver because they were
   * deleted: the cursor passes them whatever the consumer acks.
   */
  public void skipped(UUID leaseId, String group, List<DeliveryListener.Skipped> messages) {
    List<AckRequest> requests = new ArrayList<>(messages.size());
    for (DeliveryListener.Skipped m : messages) {
      requests.add(
          new AckRequest(
              m.partitionId(), m.transactionId(), "completed", leaseId.toString(), null));
    }
    ack(group, requests);
  }

  /**
   * Acks for one consumer group; outcomes in input order. Whole leased batches this broker
   * delivered take the registry's fast path (one guarded cursor advance per partition); anything
   * else, or a fast ack the lease no longer allows, takes the general path. A null group is an ack
   * that named none: a live lease decides its group, else queue mode's cursor is checked, and a
   * lease no longer live is then told success only for what it committed by its own ack.
   */
  public List<AckOutcome> ack(String group, List<AckRequest> requests) {
    AckOutcome[] out = new AckOutcome[requests.size()];
    UUID[] leases = new UUID[requests.size()];
    for (int i = 0; i < requests.size(); i++) {
      AckRequest r = requests.get(i);
      if (r.leaseId() != null && !r.leaseId().isEmpty()) {
        leases[i] = parseUuid(r.leaseId());
        if (leases[i] == null) {
          out[i] = refused(i, r, group);
        }
      }
    }
    fastPath(requests, leases, out);
    List<AckItem> items = new ArrayList<>();
    List<Integer> positions = new ArrayList<>();
    for (int i = 0; i < requests.size(); i++) {
      if (out[i] == null) {
        items.add(item(requests.get(i), leases[i]));
        positions.add(i);
      }
    }
    if (!items.isEmpty()) {
      for (AckOutcome o : store.ack(group, items)) {
        int i = positions.get(o.index());
        out[i] = o.withIndex(i);
      }
    }
    List<AckOutcome> all = Arrays.asList(out);
    registry.ended(all, leases);
    promote(all, leases, listener);
    return all;
  }

  /**
   * Acks whole registered batches in one statement, shared with concurrent requests; fills {@code
   * out} for those it applied.
   */
  private void fastPath(List<AckRequest> requests, UUID[] leases, AckOutcome[] out) {
    Map<AckRegistry.Delivery, List<Integer>> byDelivery = new IdentityHashMap<>();
    Map<AckRegistry.Delivery, UUID> leaseOf = new IdentityHashMap<>();
    Set<AckRegistry.Delivery> partial = Collections.newSetFromMap(new IdentityHashMap<>());
    for (int i = 0; i < requests.size(); i++) {
      AckRequest r = requests.get(i);
      if (leases[i] == null || out[i] != null) {
        continue;
      }
      AckRegistry.Delivery d = registry.get(leases[i], r.partitionId());
      if (d == null) {
        continue;
      }
      byDelivery.computeIfAbsent(d, k -> new ArrayList<>()).add(i);
      leaseOf.put(d, leases[i]);
      if (!(r.status().equals("completed") || r.status().equals("success"))
          || !d.transactionIds().contains(r.transactionId())) {
        partial.add(d);
      }
    }
    List<BatchAck> batches = new ArrayList<>();
    List<AckRegistry.Delivery> deliveries = new ArrayList<>();
    byDelivery.forEach(
        (d, idx) -> {
          boolean whole =
              !partial.contains(d)
                  && idx.stream().map(i -> requests.get(i).transactionId()).distinct().count()
                      == d.transactionIds().size();
          if (whole) {
            batches.add(new BatchAck(d.partitionId(), leaseOf.get(d), d.batchEnd()));
            deliveries.add(d);
          }
        });
    if (batches.isEmpty()) {
      return;
    }
    List<AckOutcome> outcomes = commit.ack(batches);
    for (int b = 0; b < batches.size(); b++) {
      AckOutcome o = outcomes.get(b);
      if (!o.success()) {
        continue; // the lease no longer holds the batch: the general path answers precisely
      }
      AckRegistry.Delivery d = deliveries.get(b);
      registry.remove(batches.get(b).leaseId(), d.partitionId());
      for (int i : byDelivery.get(d)) {
        out[i] = o.withIndex(i);
      }
    }
  }

  private static AckOutcome refused(int i, AckRequest r, String group) {
    return new AckOutcome(
        i, false, INVALID_LEASE, null, null, false, false, r.partitionId(), group, false, false);
  }

  /**
   * Tells the listener of every lease the acks ended, once per partition and group: with more
   * messages behind it the partition goes back among the pop candidates (ack-promote). {@code
   * leases}: the lease each outcome's ack named, by position (null: none).
   */
  public static void promote(List<AckOutcome> outcomes, UUID[] leases, ReleaseListener listener) {
    Set<String> told = new java.util.HashSet<>();
    for (int i = 0; i < outcomes.size(); i++) {
      AckOutcome o = outcomes.get(i);
      // a request may end two leases of a pair (one, then one issued since): each is told
      if (o.leaseEnded() && told.add(o.partitionId() + "/" + o.group() + "/" + leases[i])) {
        listener.released(o.queueName(), o.partitionName(), o.group(), o.hasMore(), leases[i]);
      }
    }
  }

  /** The store's form of a request; a dead letter always carries some error text. */
  static AckItem item(AckRequest r, UUID lease) {
    String error = r.error();
    if (error == null) {
      error = "dlq".equals(r.status()) ? "Dead-lettered by ack" : "Retries exhausted";
    }
    return new AckItem(r.partitionId(), r.transactionId(), lease, r.status(), error);
  }

  static UUID parseUuid(String s) {
    try {
      return UUID.fromString(s);
    } catch (IllegalArgumentException e) {
      return null;
    }
  }

  /** What a lease extension found. */
  public AckStore.Extension extend(String leaseId, int seconds) {
    UUID lease = parseUuid(leaseId);
    return lease == null
        ? new AckStore.Extension(AckStore.ExtendStatus.MISSING, null)
        : store.extend(lease, seconds, registry.partitions(lease));
  }
}
