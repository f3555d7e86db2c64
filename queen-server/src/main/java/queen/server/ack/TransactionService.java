package queen.server.ack;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.UUID;
import queen.server.push.Appended;
import queen.server.push.PushItem;
import queen.server.push.PushResult;
import queen.server.push.PushService;
import queen.server.store.AckItem;
import queen.server.store.AckOutcome;
import queen.server.store.TransactionStore;

/**
 * {@code POST /api/v1/transaction}: pushes and acks applied together or not at all. Inside a
 * transaction a failed or dlq ack dead-letters at once (no retry budget), and a push of a stored
 * transactionId refuses the whole transaction instead of reporting a duplicate.
 */
public final class TransactionService {
  private final TransactionStore store;
  private final PushService push;
  private final AckRegistry registry;
  private final ReleaseListener released;

  public TransactionService(
      TransactionStore store, PushService push, AckRegistry registry, ReleaseListener released) {
    this.store = store;
    this.push = push;
    this.registry = registry;
    this.released = released;
  }

  /**
   * One ack operation with its own consumer group; null: its lease decides the group. {@code
   * requiredLease}: the transaction's one required lease, for an ack that names its group and no
   * lease, checked where it may be the group's lease on the partition (null: none).
   */
  public record AckOp(int op, String group, AckRequest ack, UUID requiredLease) {}

  /** The pushed items of the transaction, each remembering its operation index. */
  public record PushOp(int op, PushItem item) {}

  /** What the transaction did, per operation. */
  public record Outcome(
      boolean success, String error, List<AckOutcome> acks, List<PushResult> pushes) {}

  /** Consumer groups by name, null (an ack's lease decides) first. */
  private static final Comparator<String> GROUP_ORDER =
      Comparator.nullsFirst(Comparator.naturalOrder());

  /**
   * Whether the required lease may be the group's on the partition. A lease this broker issued
   * names its partitions and group: a message of an autoAck pop, or another group's ack, acked
   * beside a leased message stays lease-less (under the other's lease it was refused). One it did
   * not issue, or no longer remembers, is checked.
   */
  private boolean mayHold(UUID lease, UUID partitionId, String group) {
    Set<UUID> issued = registry.partitions(lease);
    if (issued == null) {
      return true;
    }
    AckRegistry.Delivery d = registry.get(lease, partitionId);
    return issued.contains(partitionId) && (d == null || d.group().equals(group));
  }

  public Outcome commit(List<AckOp> acks, List<PushOp> pushes) {
    // groups in name order and partitions in id order within each: one lock order for all, but
    // for the acks whose lease decides their group, which come first whatever that group is (two
    // such transactions may deadlock: a 503 that the client retries)
    Map<String, List<AckItem>> byGroup = new TreeMap<>(GROUP_ORDER);
    Map<String, List<Integer>> positions = new TreeMap<>(GROUP_ORDER);
    UUID[] leases = new UUID[acks.size()];
    for (int i = 0; i < acks.size(); i++) {
      AckOp a = acks.get(i);
      AckRequest request = a.ack();
      if (a.requiredLease() != null
          && mayHold(a.requiredLease(), request.partitionId(), a.group())) {
        request =
            new AckRequest(
                request.partitionId(),
                request.transactionId(),
                request.status(),
                a.requiredLease().toString(),
                request.error());
      }
      String lease = request.leaseId();
      UUID leaseId = null;
      if (lease != null && !lease.isEmpty()) {
        leaseId = AckService.parseUuid(lease);
        if (leaseId == null) {
          return new Outcome(
              false, "ACK operation failed: " + AckService.INVALID_LEASE, List.of(), List.of());
        }
      }
      leases[i] = leaseId;
      byGroup
          .computeIfAbsent(a.group(), g -> new ArrayList<>())
          .add(AckService.item(request, leaseId));
      positions.computeIfAbsent(a.group(), g -> new ArrayList<>()).add(i);
    }
    List<PushItem> items = pushes.stream().map(PushOp::item).toList();
    return push.withFreshPartitions(
        items,
        batch -> {
          if (batch.hasDuplicateItems()) {
            return new Outcome(
                false,
                "PUSH operation failed: a transactionId occurs twice in one partition",
                List.of(),
                List.of());
          }
          TransactionStore.Outcome o = store.apply(batch.writes(), byGroup);
          if (!o.applied()) {
            return new Outcome(false, o.error(), List.of(), List.of());
          }
          // effects visible to the next pop at once: wake and feed the hot-lists before answering
          Appended appended = Appended.of(o.pushes());
          batch.announce(appended, push.listener());
          AckOutcome[] ordered = new AckOutcome[acks.size()];
          o.acks()
              .forEach(
                  (group, outcomes) -> {
                    for (AckOutcome ao : outcomes) {
                      int i = positions.get(group).get(ao.index());
                      ordered[i] = ao.withIndex(i);
                    }
                  });
          registry.ended(Arrays.asList(ordered), leases);
          AckService.promote(List.of(ordered), leases, released);
          return new Outcome(true, null, List.of(ordered), batch.results(appended));
        });
  }
}
