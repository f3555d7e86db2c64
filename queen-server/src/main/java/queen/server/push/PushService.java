package queen.server.push;

import java.time.InstantSource;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Function;
import queen.server.codec.UuidV7;
import queen.server.store.PartitionKey;
import queen.server.store.PartitionMissingException;
import queen.server.store.PushStore;

/**
 * Turns a push request into one segment per (queue, partition) and appends them atomically, merged
 * with concurrent pushes (see {@link GroupCommit}).
 *
 * <p>Dedup is per (partition, transactionId): inside one request the first item with a key wins and
 * later ones report the winner's message id; against stored messages the partition's own lock
 * decides (see {@link PushStore#append}).
 */
public final class PushService {
  private final GroupCommit commit;
  private final PartitionDirectory directory;
  private final UuidV7 ids;
  private final PushListener listener;
  private final PayloadSealing sealing;

  /**
   * @param concurrency merged push calls running at once, each on one pooled connection; pushes
   *     that arrive meanwhile wait and go together into the next call
   */
  public PushService(
      PushStore store,
      PartitionDirectory directory,
      InstantSource clock,
      PushListener listener,
      PayloadSealing sealing,
      int concurrency) {
    this.commit = new GroupCommit(store, concurrency);
    this.directory = directory;
    this.ids = new UuidV7(clock);
    this.listener = listener;
    this.sealing = sealing;
  }

  /** Where stored pushes are announced (the hot-list feed). */
  public PushListener listener() {
    return listener;
  }

  /** Stores the items; results are in input order. */
  public List<PushResult> push(List<PushItem> items) {
    if (items.isEmpty()) {
      return List.of();
    }
    return withFreshPartitions(
        items,
        batch -> {
          Appended appended = commit.append(batch);
          batch.announce(appended, listener);
          return batch.results(appended);
        });
  }

  /** The items with a transactionId each: the given one, or a new UUIDv7. */
  List<PushItem> withTransactionIds(List<PushItem> items) {
    List<PushItem> out = new ArrayList<>(items.size());
    for (PushItem i : items) {
      String t = i.transactionId();
      out.add(
          t == null || t.isEmpty()
              ? new PushItem(
                  i.queue(),
                  i.partition(),
                  i.payload(),
                  ids.next().toString(),
                  i.traceId(),
                  i.producerSub())
              : i);
    }
    return out;
  }

  /**
   * Prepares the items (transaction ids assigned, partitions resolved or created, segments encoded)
   * and runs the work on them. If a partition turns out deleted since it was cached (its queue
   * deleted, or the partition removed as inactive), the directory forgets the items' partitions,
   * and every partition after a second miss, and the work runs again on a freshly prepared batch,
   * up to {@link #PREPARES} times in all: a push merged into one call with others fails with any of
   * theirs, so a retry could meet another's stale partition.
   */
  public <T> T withFreshPartitions(List<PushItem> items, Function<PushBatch, T> work) {
    List<String> txns = new ArrayList<>(items.size());
    for (PushItem item : items) {
      String t = item.transactionId();
      txns.add(t == null || t.isEmpty() ? ids.next().toString() : t);
    }
    List<PartitionKey> keys =
        items.stream().map(i -> new PartitionKey(i.queue(), i.partition())).toList();
    for (int attempt = 1; ; attempt++) {
      try {
        PushBatch batch = new PushBatch(items, txns, directory.resolve(keys), sealing);
        sealing.beforeStoring(batch);
        return work.apply(batch);
      } catch (PartitionMissingException e) {
        if (attempt == PREPARES) {
          throw e;
        }
        if (attempt == 1) {
          directory.forget(keys); // a merged call's other pushes forget their own
        } else {
          // missed again: merged with other pushes' stale partitions (a deleted queue's, say)
          directory.forgetAll();
        }
      }
    }
  }

  /** Preparations of one push at most, each after a partition was found missing. */
  static final int PREPARES = 4;
}
