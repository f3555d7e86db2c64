package queen.server.pop;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import queen.server.codec.Frame;
import queen.server.codec.MessageIds;
import queen.server.store.PartitionClaim;
import queen.server.store.SegmentSlice;
import queen.server.store.Verdict;

/**
 * The frame walk after PostgreSQL answered a pop (never inside it): the claimed segment slices cut
 * into the messages to deliver, the deleted ones the lease covers but nobody sees, and the last
 * offset each partition's lease covers.
 */
record FrameCut(
    PopResult result,
    List<DeliveryListener.Skipped> skipped,
    Map<UUID, Long> ends,
    Set<UUID> heldBack) {

  /** {@code sliceFrames}: the frames of every delivered slice, in order ({@link SegmentCache}). */
  static FrameCut of(
      PopRequest request, UUID worker, List<PartitionClaim> claims, List<List<Frame>> sliceFrames) {
    Iterator<List<Frame>> cut = sliceFrames.iterator();
    List<PoppedMessage> messages = new ArrayList<>();
    List<DeliveryListener.Skipped> skipped = new ArrayList<>();
    Map<UUID, Long> ends = new HashMap<>();
    int claimed = 0;
    for (PartitionClaim claim : claims) {
      if (claim.verdict() != Verdict.DELIVERED) {
        continue;
      }
      claimed++;
      for (SegmentSlice slice : claim.slices()) {
        List<Frame> frames = cut.next();
        long offset = slice.baseOffset() + slice.startIdx();
        long created =
            TimeUnit.SECONDS.toMicros(slice.createdAt().getEpochSecond())
                + slice.createdAt().getNano() / 1_000;
        for (Frame frame : frames) {
          ends.put(claim.partitionId(), offset);
          if (frame.isDeleted()) {
            skipped.add(new DeliveryListener.Skipped(claim.partitionId(), frame.transactionId()));
            offset++;
            continue;
          }
          messages.add(
              new PoppedMessage(
                  MessageIds.of(claim.partitionId(), offset, slice.createdAt()),
                  claim.queue(),
                  claim.partitionId(),
                  claim.partition(),
                  offset++,
                  claim.attempt(),
                  created,
                  frame));
        }
      }
    }
    return new FrameCut(
        new PopResult(request.autoAck() ? null : worker, request.group(), claimed, messages),
        skipped,
        ends,
        Set.of());
  }

  /**
   * This cut, the leases of {@code partitions} running past what it answers (an unreadable push).
   */
  FrameCut heldBack(Set<UUID> partitions) {
    return new FrameCut(result, skipped, ends, partitions);
  }

  /**
   * What a leased pop delivered, per partition: the transaction ids delivered, and the lease's end
   * (past a deleted tail, so that a whole-batch ack covers it too).
   */
  List<DeliveryListener.Leased> leased() {
    Map<UUID, List<PoppedMessage>> byPartition = new LinkedHashMap<>();
    for (PoppedMessage m : result.messages()) {
      byPartition.computeIfAbsent(m.partitionId(), k -> new ArrayList<>()).add(m);
    }
    List<DeliveryListener.Leased> leased = new ArrayList<>(byPartition.size());
    byPartition.forEach(
        (pid, ms) ->
            leased.add(
                new DeliveryListener.Leased(
                    pid,
                    ms.getFirst().queue(),
                    ms.getFirst().partition(),
                    ms.stream().map(m -> m.frame().transactionId()).toList(),
                    ends.get(pid))));
    return leased;
  }
}
