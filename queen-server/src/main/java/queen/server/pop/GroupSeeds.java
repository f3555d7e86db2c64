package queen.server.pop;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import queen.server.store.Claim;
import queen.server.store.PopStore;

/**
 * Remembers which (queue, group) pairs have had their group-first-contact bulk seed, so that the
 * seed runs in its own short transaction before a group's first wildcard or discovery pop and never
 * again. Discovery targets are re-checked periodically, since matching queues can appear.
 * Forgetting is harmless: the seed is idempotent, and the per-partition lazy path stays correct
 * without it.
 */
final class GroupSeeds {
  private static final long DISCOVERY_RECHECK_NANOS = TimeUnit.SECONDS.toNanos(30);
  private static final int MAX_ENTRIES = 100_000;

  private final PopStore store;
  private final Map<String, Long> seeded = new ConcurrentHashMap<>();

  GroupSeeds(PopStore store) {
    this.store = store;
  }

  void ensure(PopTarget target, Claim claim) {
    String key;
    long now = System.nanoTime();
    switch (target) {
      case PopTarget.Partition p -> {
        return;
      }
      case PopTarget.Queue q -> {
        key = "q\u0000" + q.queue() + "\u0000" + claim.group();
        if (seeded.containsKey(key)) {
          return;
        }
        PopStore.Seeded s = store.seedGroup(q.queue(), null, null, claim);
        if (s.matched() == 0 || s.pending() > 0) {
          return; // no such queue yet, or busy: try again next time
        }
      }
      case PopTarget.Discovery d -> {
        key = "d\u0000" + d.namespace() + "\u0000" + d.task() + "\u0000" + claim.group();
        Long last = seeded.get(key);
        if (last != null && now - last < DISCOVERY_RECHECK_NANOS) {
          return;
        }
        store.seedGroup(null, d.namespace(), d.task(), claim);
      }
    }
    if (seeded.size() >= MAX_ENTRIES) {
      seeded.clear();
    }
    seeded.put(key, now);
  }

  /**
   * The group was deleted or sought on the queue (every queue when null): its next first contact
   * seeds again.
   */
  void forget(String queue, String group) {
    seeded
        .keySet()
        .removeIf(
            k ->
                k.endsWith("\u0000" + group)
                    && (queue == null
                        || k.startsWith("q\u0000" + queue + "\u0000")
                        || k.startsWith("d\u0000")));
  }
}
