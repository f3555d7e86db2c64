package queen.server.push;

import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import queen.server.store.AppendOutcome;
import queen.server.store.Coalescer;
import queen.server.store.LockOrder;
import queen.server.store.PushStore;
import queen.server.store.SegmentWrite;

/**
 * Merges concurrent push requests into one call of the push function: one round trip, one statement
 * set and one commit (one WAL flush) for all of them, instead of one each.
 *
 * <p>The merging is a {@link Coalescer}'s. Each flush appends its segments in partition-id order,
 * the lock order every pusher uses. Two queued requests that carry the same (partition,
 * transactionId) never share a flush: the later one waits for the next, where it finds the earlier
 * one stored and reports the duplicate.
 */
final class GroupCommit {
  /** Segments merged into one call at most. */
  static final int MAX_SEGMENTS = 1_000;

  private final PushStore store;
  private final Coalescer<PushBatch, List<AppendOutcome>> coalescer;

  GroupCommit(PushStore store, int maxInFlight) {
    this.store = store;
    this.coalescer = new Coalescer<>(this::flush, Selection::new, maxInFlight);
  }

  /** Appends the batch's segments, merged with whatever else is pushed meanwhile. */
  List<AppendOutcome> append(PushBatch batch) {
    return coalescer.submit(batch);
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

  private List<List<AppendOutcome>> flush(List<PushBatch> batches) {
    List<SegmentWrite> writes = new ArrayList<>();
    Map<SegmentWrite, PushBatch> owner = new IdentityHashMap<>();
    Map<PushBatch, List<SegmentWrite>> mine = new IdentityHashMap<>();
    for (PushBatch b : batches) {
      List<SegmentWrite> w = b.writes();
      mine.put(b, w);
      for (SegmentWrite s : w) {
        owner.put(s, b);
        writes.add(s);
      }
    }
    // partition-id order across the merged requests; a stable sort keeps each request's order
    writes.sort((a, b) -> LockOrder.PARTITIONS.compare(a.partitionId(), b.partitionId()));
    Map<SegmentWrite, SegmentWrite> rewritten = new HashMap<>();
    List<AppendOutcome> outcomes =
        store.append(
            writes,
            (segment, dups) -> {
              SegmentWrite original = originalOf(segment, rewritten);
              SegmentWrite rest = owner.get(original).without(segment, dups);
              if (rest != null) {
                rewritten.put(rest, original);
              }
              return rest;
            });
    Map<SegmentWrite, AppendOutcome> byWrite = new IdentityHashMap<>();
    for (int i = 0; i < writes.size(); i++) {
      byWrite.put(writes.get(i), outcomes.get(i));
    }
    List<List<AppendOutcome>> out = new ArrayList<>(batches.size());
    for (PushBatch b : batches) {
      List<AppendOutcome> own = new ArrayList<>();
      for (SegmentWrite w : mine.get(b)) {
        own.add(byWrite.get(w));
      }
      out.add(own);
    }
    return out;
  }

  private static SegmentWrite originalOf(
      SegmentWrite segment, Map<SegmentWrite, SegmentWrite> rewritten) {
    SegmentWrite s = segment;
    for (SegmentWrite o; (o = rewritten.get(s)) != null; ) {
      s = o;
    }
    return s;
  }
}
