package queen.server.push;

import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicInteger;
import queen.server.store.AppendOutcome;
import queen.server.store.PushStore;
import queen.server.store.SegmentWrite;

/**
 * Merges concurrent push requests into one call of the push function: one round trip, one statement
 * set and one commit (one WAL flush) for all of them, instead of one each.
 *
 * <p>A request never waits for company: with fewer than {@code maxInFlight} flushes running, its
 * arrival starts one at once. Requests that arrive while the flushes are busy queue up, and the
 * next flush takes them all, so merging grows with load and adds no latency without it. Each flush
 * appends its segments in partition-id order, the lock order every pusher uses. Two queued requests
 * that carry the same (partition, transactionId) never share a flush: the later one waits for the
 * next, where it finds the earlier one stored and reports the duplicate.
 */
final class GroupCommit {
  /** Segments merged into one call at most. */
  static final int MAX_SEGMENTS = 1_000;

  private final PushStore store;
  private final int maxInFlight;
  private final ConcurrentLinkedQueue<Pending> queue = new ConcurrentLinkedQueue<>();
  private final AtomicInteger flushing = new AtomicInteger();

  GroupCommit(PushStore store, int maxInFlight) {
    this.store = store;
    this.maxInFlight = maxInFlight;
  }

  private record Pending(PushBatch batch, CompletableFuture<List<AppendOutcome>> done) {}

  /** Appends the batch's segments, merged with whatever else is pushed meanwhile. */
  List<AppendOutcome> append(PushBatch batch) {
    CompletableFuture<List<AppendOutcome>> done = new CompletableFuture<>();
    queue.add(new Pending(batch, done));
    drain();
    try {
      return done.join();
    } catch (CompletionException e) {
      if (e.getCause() instanceof RuntimeException r) {
        throw r;
      }
      throw e;
    }
  }

  /** Runs flushes on the calling thread while there is queued work and a flush slot is free. */
  private void drain() {
    while (!queue.isEmpty()) {
      int running = flushing.get();
      if (running >= maxInFlight) {
        return; // a running flush picks the queued work up when it ends
      }
      if (!flushing.compareAndSet(running, running + 1)) {
        continue;
      }
      try {
        flush(take());
      } finally {
        flushing.decrementAndGet();
      }
    }
  }

  /**
   * Takes queued requests for one flush, leaving behind any that shares a (partition,
   * transactionId) with one taken.
   */
  private List<Pending> take() {
    List<Pending> taken = new ArrayList<>();
    List<Pending> later = new ArrayList<>();
    Map<UUID, List<Set<String>>> seen = new HashMap<>();
    int segments = 0;
    for (Pending p; segments < MAX_SEGMENTS && (p = queue.poll()) != null; ) {
      Map<UUID, Set<String>> mine = p.batch().transactionIds();
      if (conflicts(mine, seen)) {
        later.add(p);
        continue;
      }
      mine.forEach((pid, txns) -> seen.computeIfAbsent(pid, k -> new ArrayList<>()).add(txns));
      segments += mine.size();
      taken.add(p);
    }
    queue.addAll(later);
    return taken;
  }

  private static boolean conflicts(Map<UUID, Set<String>> mine, Map<UUID, List<Set<String>>> seen) {
    for (var e : mine.entrySet()) {
      for (Set<String> other : seen.getOrDefault(e.getKey(), List.of())) {
        if (!Collections.disjoint(e.getValue(), other)) {
          return true;
        }
      }
    }
    return false;
  }

  private void flush(List<Pending> pending) {
    if (pending.isEmpty()) {
      return;
    }
    List<SegmentWrite> writes = new ArrayList<>();
    Map<SegmentWrite, PushBatch> owner = new IdentityHashMap<>();
    Map<PushBatch, List<SegmentWrite>> mine = new IdentityHashMap<>();
    for (Pending p : pending) {
      List<SegmentWrite> w = p.batch().writes();
      mine.put(p.batch(), w);
      for (SegmentWrite s : w) {
        owner.put(s, p.batch());
        writes.add(s);
      }
    }
    // partition-id order across the merged requests; a stable sort keeps each request's order
    writes.sort((a, b) -> PushBatch.PG_UUID_ORDER.compare(a.partitionId(), b.partitionId()));
    Map<SegmentWrite, SegmentWrite> rewritten = new HashMap<>();
    List<AppendOutcome> outcomes;
    try {
      outcomes =
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
    } catch (RuntimeException e) {
      pending.forEach(p -> p.done().completeExceptionally(e));
      return;
    }
    Map<SegmentWrite, AppendOutcome> byWrite = new IdentityHashMap<>();
    for (int i = 0; i < writes.size(); i++) {
      byWrite.put(writes.get(i), outcomes.get(i));
    }
    for (Pending p : pending) {
      List<AppendOutcome> own = new ArrayList<>();
      for (SegmentWrite w : mine.get(p.batch())) {
        own.add(byWrite.get(w));
      }
      p.done().complete(own);
    }
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
