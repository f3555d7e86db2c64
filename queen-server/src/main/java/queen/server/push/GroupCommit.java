package queen.server.push;

import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.UUID;
import queen.server.codec.Frame;
import queen.server.store.Coalescer;
import queen.server.store.LockOrder;
import queen.server.store.PushStore;
import queen.server.store.SegmentWrite;

/**
 * Merges concurrent push requests into one call of the push function: one round trip, one statement
 * set and one commit (one WAL flush) for all of them, instead of one each. Requests bound for the
 * same partition share one segment (up to {@link #MAX_MERGED_MESSAGES}): fewer rows, better
 * compression, one transactionId-index page update instead of several.
 *
 * <p>The merging is a {@link Coalescer}'s. Each flush appends its segments in partition-id order,
 * the lock order every pusher uses. Two queued requests that carry the same (partition,
 * transactionId) never share a flush: the later one waits for the next, where it finds the earlier
 * one stored and reports the duplicate. That is what keeps per-item answers exact in a merged
 * segment: a stored duplicate belongs to exactly one request.
 */
final class GroupCommit {
  /** Segments merged into one call at most. */
  static final int MAX_SEGMENTS = 1_000;

  /** Requests are merged into one segment while it stays at or below this many messages. */
  static final int MAX_MERGED_MESSAGES = 1_000;

  /**
   * Requests are merged into one segment while its payloads stay at or below this many bytes:
   * concurrent pushes of large messages made one segment of hundreds of MB, which every pop of it
   * decodes whole. A bigger request goes alone, as big as it came.
   */
  static final int MAX_MERGED_BYTES = 1 << 20;

  private final PushStore store;
  private final Coalescer<PushBatch, Appended> coalescer;

  GroupCommit(PushStore store, int maxInFlight) {
    this.store = store;
    this.coalescer = new Coalescer<>(this::flush, Selection::new, maxInFlight);
  }

  /**
   * Appends the batch's messages, merged with whatever else is pushed meanwhile. Answers what the
   * flush stored, which holds every message of the batch (the batches of one flush never share a
   * partition and transaction id).
   */
  Appended append(PushBatch batch) {
    return coalescer.submit(batch);
  }

  /** Requests waiting for a flush slot. */
  int queued() {
    return coalescer.queued();
  }

  /** Takes requests up to the segment cap, deferring any that repeats a (partition, txn) taken. */
  private static final class Selection implements Coalescer.Selection<PushBatch> {
    private final Map<UUID, List<Set<String>>> seen = new HashMap<>();
    private int segments;

    @Override
    public boolean full() {
      return segments >= MAX_SEGMENTS;
    }

    @Override
    public boolean accept(PushBatch batch) {
      Map<UUID, Set<String>> mine = batch.transactionIds();
      for (var e : mine.entrySet()) {
        for (Set<String> other : seen.getOrDefault(e.getKey(), List.of())) {
          if (!Collections.disjoint(e.getValue(), other)) {
            return false;
          }
        }
      }
      mine.forEach((pid, txns) -> seen.computeIfAbsent(pid, k -> new ArrayList<>()).add(txns));
      segments += mine.size();
      return true;
    }
  }

  private List<Appended> flush(List<PushBatch> batches) {

    Map<UUID, List<List<Frame>>> byPartition = new TreeMap<>(LockOrder.PARTITIONS);
    for (PushBatch b : batches) {
      b.frames()
          .forEach((pid, f) -> byPartition.computeIfAbsent(pid, k -> new ArrayList<>()).add(f));
    }
    List<SegmentWrite> writes = new ArrayList<>();
    byPartition.forEach(
        (pid, parts) -> {
          List<Frame> segment = new ArrayList<>();
          long bytes = 0;
          for (List<Frame> part : parts) {
            long partBytes = 0;
            for (Frame f : part) {
              partBytes += f.payload().length;
            }
            if (!segment.isEmpty()
                && (segment.size() + part.size() > MAX_MERGED_MESSAGES
                    || bytes + partBytes > MAX_MERGED_BYTES)) {
              writes.add(SegmentWrite.of(pid, segment));
              segment = new ArrayList<>();
              bytes = 0;
            }
            segment.addAll(part);
            bytes += partBytes;
          }
          writes.add(SegmentWrite.of(pid, segment));
        });
    Appended appended = Appended.of(store.append(writes));
    return batches.stream().map(b -> appended).toList();
  }
}
