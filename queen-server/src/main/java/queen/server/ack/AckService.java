package queen.server.ack;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.UUID;
import queen.server.store.AckItem;
import queen.server.store.AckOutcome;
import queen.server.store.AckStore;

/**
 * Applies acknowledgements. A lease id that is not even a UUID cannot name a live lease: it is
 * refused here, per item, like any stale lease, without a database round trip.
 */
public final class AckService {
  static final String INVALID_LEASE = "Invalid or expired lease";

  private final AckStore store;
  private final ReleaseListener listener;

  public AckService(AckStore store, ReleaseListener listener) {
    this.store = store;
    this.listener = listener;
  }

  /** Acks for one consumer group; outcomes in input order. */
  public List<AckOutcome> ack(String group, List<AckRequest> requests) {
    AckOutcome[] out = new AckOutcome[requests.size()];
    List<AckItem> items = new ArrayList<>(requests.size());
    List<Integer> positions = new ArrayList<>(requests.size());
    for (int i = 0; i < requests.size(); i++) {
      AckRequest r = requests.get(i);
      UUID lease = null;
      if (r.leaseId() != null && !r.leaseId().isEmpty()) {
        lease = parseUuid(r.leaseId());
        if (lease == null) {
          out[i] =
              new AckOutcome(
                  i,
                  false,
                  INVALID_LEASE,
                  null,
                  null,
                  false,
                  false,
                  r.partitionId(),
                  group,
                  false,
                  false);
          continue;
        }
      }
      items.add(item(r, lease));
      positions.add(i);
    }
    if (!items.isEmpty()) {
      for (AckOutcome o : store.ack(group, items)) {
        int i = positions.get(o.index());
        out[i] = o.withIndex(i);
      }
      promote(Arrays.asList(out), listener);
    }
    return Arrays.asList(out);
  }

  /**
   * Tells the listener of every lease the acks ended, once per partition and group: with more
   * messages behind it the partition goes back among the pop candidates (ack-promote).
   */
  static void promote(List<AckOutcome> outcomes, ReleaseListener listener) {
    java.util.Set<String> told = new java.util.HashSet<>();
    for (AckOutcome o : outcomes) {
      if (o.leaseEnded() && told.add(o.partitionId() + "/" + o.group())) {
        listener.released(o.queueName(), o.partitionName(), o.group(), o.hasMore());
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
        : store.extend(lease, seconds);
  }
}
