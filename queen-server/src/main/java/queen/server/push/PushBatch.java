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
import queen.server.store.LockOrder;
import queen.server.store.PartitionKey;
import queen.server.store.PartitionMissingException;
import queen.server.store.PartitionRef;
import queen.server.store.SegmentWrite;

/**
 * The items of one push request, resolved: their messages by partition, in partition id order (the
 * lock order every pusher uses), the first item of each (partition, transactionId) winning within
 * the request.
 */
public final class PushBatch {
  private final List<PushItem> items;
  private final List<String> txns;
  private final PartitionRef[] refs;
  private final int[] winner;
  private final Map<UUID, Group> groups = new TreeMap<>(LockOrder.PARTITIONS);

  PushBatch(
      List<PushItem> items,
      List<String> txns,
      Map<PartitionKey, PartitionRef> resolved,
      PayloadSealing sealing) {
    this.items = items;
    this.txns = txns;
    this.refs = new PartitionRef[items.size()];
    this.winner = new int[items.size()];

    for (int i = 0; i < items.size(); i++) {
      PushItem item = items.get(i);
      refs[i] = resolved.get(new PartitionKey(item.queue(), item.partition()));
      if (refs[i] == null) {
        // its queue deleted while the directory created the partition: prepared again
        throw new PartitionMissingException();
      }
      Group g = groups.computeIfAbsent(refs[i].partitionId(), Group::new);
      Integer first = g.firstByTxn.putIfAbsent(txns.get(i), i);
      winner[i] = first == null ? i : first;
      if (first == null) {
        g.indexes.add(i);
        g.frames.add(sealing.frame(txns.get(i), item));
      }
    }
  }

  /** The messages to append, by partition, in lock order. */
  Map<UUID, List<Frame>> frames() {
    Map<UUID, List<Frame>> out = new TreeMap<>(LockOrder.PARTITIONS);
    groups.forEach((pid, g) -> out.put(pid, Collections.unmodifiableList(g.frames)));
    return out;
  }

  /**
   * One segment per partition, in lock order: the request on its own, as a transaction writes it.
   */
  public List<SegmentWrite> writes() {
    return groups.values().stream().map(g -> SegmentWrite.of(g.partitionId, g.frames)).toList();
  }

  /** The transaction ids the batch writes, by partition. */
  Map<UUID, Set<String>> transactionIds() {
    Map<UUID, Set<String>> out = new HashMap<>();
    groups.forEach((pid, g) -> out.put(pid, g.firstByTxn.keySet()));
    return out;
  }

  /** Whether a frame of the batch is sealed. */
  boolean sealsAny() {
    for (Group g : groups.values()) {
      for (Frame f : g.frames) {
        if ((f.flags() & Frame.FLAG_ENCRYPTED) != 0) {
          return true;
        }
      }
    }
    return false;
  }

  /** True when two items of the request share a (partition, transactionId). */
  public boolean hasDuplicateItems() {
    for (int i = 0; i < winner.length; i++) {
      if (winner[i] != i) {
        return true;
      }
    }
    return false;
  }

  /** Tells the listener what was stored, per partition: the batch's messages less duplicates. */
  public void announce(Appended appended, PushListener listener) {
    groups.forEach(
        (pid, g) -> {
          int stored = 0;
          long bytes = 0;
          for (Frame f : g.frames) {
            if (!appended.duplicate(pid, f.transactionId())) {
              stored++;
              bytes += f.payload().length;
            }
          }
          if (stored > 0) {
            PartitionRef ref = refs[g.indexes.getFirst()];
            listener.stored(ref.queue(), ref.partition(), stored, bytes);
          }
        });
  }

  /**
   * One result per item, in input order: queued with its message's id, or duplicate with the id of
   * the message stored before (or of the request's first item with that transaction id).
   */
  public List<PushResult> results(Appended appended) {
    List<PushResult> results = new ArrayList<>(items.size());
    for (int i = 0; i < items.size(); i++) {
      UUID pid = refs[i].partitionId();
      String txn = txns.get(i);
      UUID id = appended.id(pid, txn);
      if (winner[i] == i && !appended.duplicate(pid, txn)) {
        results.add(
            new PushResult(
                PushResult.Status.QUEUED, txn, id, pid, items.get(i).traceId(), refs[i].queue()));
      } else {
        results.add(
            new PushResult(PushResult.Status.DUPLICATE, txn, id, pid, null, refs[i].queue()));
      }
    }
    return results;
  }

  /** The items of the request bound for one partition, deduplicated by transaction id. */
  private static final class Group {
    final UUID partitionId;
    final Map<String, Integer> firstByTxn = new HashMap<>();
    final List<Integer> indexes = new ArrayList<>();
    final List<Frame> frames = new ArrayList<>();

    Group(UUID partitionId) {
      this.partitionId = partitionId;
    }
  }
}
