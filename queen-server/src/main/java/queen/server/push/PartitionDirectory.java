package queen.server.push;

import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import queen.server.store.PartitionKey;
import queen.server.store.PartitionRef;
import queen.server.store.QueueStore;

/**
 * Caches partition ids by name so that a push to known partitions costs no lookup.
 *
 * <p>Unknown names are created in their own short transaction before the push transaction (see
 * {@code queen.log_ensure_partitions_v1}). A cached id goes stale when its queue is deleted, or the
 * partition removed as inactive (PARTITION_CLEANUP_DAYS), by this broker or another; the push then
 * finds the partition missing, and the caller forgets the push's keys and prepares it again.
 */
public final class PartitionDirectory {
  /** Past this many names the cache is dropped rather than grown without bound. */
  private static final int MAX_ENTRIES = 200_000;

  private final QueueStore store;
  private final Map<PartitionKey, PartitionRef> cache = new ConcurrentHashMap<>();

  public PartitionDirectory(QueueStore store) {
    this.store = store;
  }

  /** Resolves every key, creating queues and partitions that do not exist yet. */
  public Map<PartitionKey, PartitionRef> resolve(Collection<PartitionKey> keys) {
    Map<PartitionKey, PartitionRef> found = new HashMap<>();
    List<PartitionKey> missing =
        keys.stream()
            .distinct()
            .filter(
                k -> {
                  PartitionRef ref = cache.get(k);
                  if (ref != null) {
                    found.put(k, ref);
                  }
                  return ref == null;
                })
            .toList();
    if (!missing.isEmpty()) {
      Map<PartitionKey, PartitionRef> created = store.ensurePartitions(missing);
      if (cache.size() + created.size() > MAX_ENTRIES) {
        cache.clear();
      }
      cache.putAll(created);
      found.putAll(created);
    }
    return found;
  }

  /**
   * Drops the cached ids of these keys, after a push of them found a partition missing. Only these:
   * dropping every id made each push of the next minutes to any other cached partition (up to
   * {@link #MAX_ENTRIES}) a lookup, for one removed partition.
   */
  public void forget(Collection<PartitionKey> keys) {
    keys.forEach(cache::remove);
  }

  /** Drops every cached id. */
  public void forgetAll() {
    cache.clear();
  }

  /** Whether the id of this key is cached. */
  boolean knows(PartitionKey key) {
    return cache.containsKey(key);
  }
}
