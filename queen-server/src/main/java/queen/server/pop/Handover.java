package queen.server.pop;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.UUID;
import java.util.stream.Collectors;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import queen.server.store.Claim;
import queen.server.store.PartitionClaim;
import queen.server.store.PopStore;
import queen.server.store.Verdict;

/**
 * What follows a claim that PostgreSQL committed: its slices read and cut into the messages to
 * answer, and the deleted ones its lease covers acknowledged. A push that cannot be decoded fails
 * its own partition, not the others' messages; a leased pop that fails after its claim gives its
 * leases back, as does one whose claimed segments of a partition were deleted before it read them.
 */
final class Handover {
  private static final Logger log = LoggerFactory.getLogger(Handover.class);

  private final PopStore store;
  private final SegmentCache segments;
  private final DeliveryListener delivered;

  Handover(PopStore store, SegmentCache segments, DeliveryListener delivered) {
    this.store = store;
    this.segments = segments;
    this.delivered = delivered;
  }

  /**
   * The claims cut into an answer. A partition's messages from a push that cannot be decoded on are
   * left out of it, and a leased claim keeps its lease over them until it ends (given back, it
   * would fail every pop of the group at once); the pop fails with it only when nothing else was
   * delivered. An autoAck pop's cursors moved with its claim: answering 500 lost every readable
   * message of the claim.
   */
  FrameCut cut(PopRequest request, Claim claim, List<PartitionClaim> claims) {
    List<PartitionClaim> readable = claims;
    List<UnreadablePushException> unreadable = new ArrayList<>();
    try {
      FrameCut answer = null;
      while (answer == null) {
        try {
          answer =
              FrameCut.of(
                  request, claim.workerId(), readable, segments.frames(readable, store::blobs));
        } catch (UnreadablePushException e) {
          // the partition's messages before that push are answered; the cut ends there
          unreadable.add(e);
          readable =
              readable.stream()
                  .map(c -> c.partitionId().equals(e.partitionId()) ? c.before(e.baseOffset()) : c)
                  .filter(Objects::nonNull)
                  .toList();
        }
      }
      if (!request.autoAck() && !answer.skipped().isEmpty()) {
        // before the registry learns the lease, so that these acks take the general path
        delivered.skipped(claim.workerId(), request.group(), answer.skipped());
      }
      boolean fails = !unreadable.isEmpty() && answer.result().isEmpty();
      // the one the pop fails with is logged as its answer is
      unreadable.stream()
          .skip(fails ? 1 : 0)
          .forEach(e -> log.error("pop of group {}: {}", request.group(), e.getMessage()));
      if (fails) {
        throw unreadable.getFirst();
      }
      if (!request.autoAck()) {
        Set<UUID> cut = cutShort(unreadable);
        Map<UUID, Long> ends = answer.ends();
        giveBack(
            claim,
            readable.stream()
                .filter(c -> !ends.containsKey(c.partitionId()) && !cut.contains(c.partitionId()))
                .toList(),
            null);
      }
      return unreadable.isEmpty() ? answer : answer.heldBack(cutShort(unreadable));
    } catch (RuntimeException e) {
      if (!request.autoAck()) {
        // a claim cut at an unreadable push keeps its lease over it
        Set<UUID> cut = cutShort(unreadable);
        giveBack(claim, readable.stream().filter(c -> !cut.contains(c.partitionId())).toList(), e);
      }
      throw e;
    }
  }

  /** The partitions whose claim ends at an unreadable push. */
  private static Set<UUID> cutShort(List<UnreadablePushException> unreadable) {
    return unreadable.stream()
        .map(UnreadablePushException::partitionId)
        .collect(Collectors.toSet());
  }

  /**
   * A leased pop that failed after its claim (a stub's blob read, or the acks of deleted messages,
   * met a database outage), or whose claimed segments of a partition were all deleted before their
   * stubs' blobs were read (retention, a clear), ends those leases now: nobody received the batch,
   * which kept its partitions from every consumer of the group for a lease time. Best effort: a
   * give-back that fails leaves the leases to expire, and is added to {@code cause} when there is
   * one.
   */
  private void giveBack(Claim claim, List<PartitionClaim> claims, Exception cause) {
    List<PartitionClaim> leased =
        claims.stream().filter(c -> c.verdict() == Verdict.DELIVERED).toList();
    if (leased.isEmpty()) {
      return;
    }
    try {
      store.giveBack(
          claim.group(),
          claim.workerId(),
          leased.stream().map(PartitionClaim::partitionId).toList());
    } catch (RuntimeException e) {
      if (cause != null) {
        cause.addSuppressed(e);
      }
      log.debug("giving back the leases of a pop failed: {}", e.toString());
      return;
    }
    leased.forEach(
        c -> delivered.gaveBack(claim.workerId(), claim.group(), c.queue(), c.partition()));
  }
}
