package queen.server.push;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.UUID;
import queen.server.codec.Frame;
import queen.server.codec.SegmentCodec;
import queen.server.codec.UuidV7;
import queen.server.store.AppendOutcome;
import queen.server.store.LockOrder;
import queen.server.store.PartitionKey;
import queen.server.store.PartitionRef;
import queen.server.store.SegmentWrite;

/**
 * The items of one push request, resolved and encoded: one segment per partition, in partition id
 * order (the lock order every pusher uses), the first item of each (partition, transactionId)
 * winning within the request.
 */
public final class PushBatch {
  private final List<PushItem> items;
  private final List<String> txns;
  private final PartitionRef[] refs;
  private final int[] winner;
  private final UUID[] messageIds;
  private final Map<UUID, Group> groups = new TreeMap<>(LockOrder.PARTITIONS);

  PushBatch(
      List<PushItem> items,
      List<String> txns,
      Map<PartitionKey, PartitionRef> resolved,
      UuidV7 ids,
      long createdAtMicros) {
    this.items = items;
    this.txns = txns;
    this.refs = new PartitionRef[items.size()];
    this.winner = new int[items.size()];
    this.messageIds = new UUID[items.size()];
    for (int i = 0; i < items.size(); i++) {
      PushItem item = items.get(i);
      refs[i] = resolved.get(new PartitionKey(item.queue(), item.partition()));
      Group g = groups.computeIfAbsent(refs[i].partitionId(), Group::new);
      Integer first = g.firstByTxn.putIfAbsent(txns.get(i), i);
      winner[i] = first == null ? i : first;
      if (first == null) {
        messageIds[i] = ids.next();
        g.indexes.add(i);
        g.frames.add(
            new Frame(
                messageIds[i],
                txns.get(i),
                item.traceId(),
                item.producerSub(),
                createdAtMicros,
                0,
                item.payload()));
      }
    }
  }

  private List<SegmentWrite> writes;

  /** The segments to append, one per partition, in lock order (encoded once). */
  public List<SegmentWrite> writes() {
    if (writes == null) {
      writes = groups.values().stream().map(PushBatch::encode).toList();
    }
    return writes;
  }

  /** The transaction ids the batch writes, by partition. */
  Map<UUID, Set<String>> transactionIds() {
    Map<UUID, Set<String>> out = new HashMap<>();
    groups.forEach((pid, g) -> out.put(pid, g.firstByTxn.keySet()));
    return out;
  }

  /** Re-encodes a segment without stored duplicates; null when nothing remains. */
  public SegmentWrite without(SegmentWrite segment, Set<String> duplicates) {
    Group g = groups.get(segment.partitionId());
    g.frames.removeIf(f -> duplicates.contains(f.transactionId()));
    return g.frames.isEmpty() ? null : encode(g);
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

  /** Tells the listener what the outcome of {@link #writes()} stored, per partition. */
  public void announce(List<AppendOutcome> outcomes, PushListener listener) {
    List<Group> ordered = List.copyOf(groups.values());
    for (int g = 0; g < ordered.size(); g++) {
      SegmentWrite written = outcomes.get(g).written();
      if (written != null) {
        PartitionRef ref = refs[ordered.get(g).indexes.getFirst()];
        listener.stored(ref.queue(), ref.partition(), written.count());
      }
    }
  }

  /** One result per item, in input order, from the outcome of {@link #writes()}. */
  public List<PushResult> results(List<AppendOutcome> outcomes) {
    Map<Integer, UUID> storedOwner = new HashMap<>();
    List<Group> ordered = List.copyOf(groups.values());
    for (int g = 0; g < ordered.size(); g++) {
      Map<String, UUID> dups = outcomes.get(g).duplicates();
      for (int i : ordered.get(g).indexes) {
        UUID owner = dups.get(txns.get(i));
        if (owner != null) {
          storedOwner.put(i, owner);
        }
      }
    }
    List<PushResult> results = new ArrayList<>(items.size());
    for (int i = 0; i < items.size(); i++) {
      int w = winner[i];
      UUID owner = storedOwner.get(w);
      if (w == i && owner == null) {
        results.add(
            new PushResult(
                PushResult.Status.QUEUED,
                txns.get(i),
                messageIds[i],
                refs[i].partitionId(),
                items.get(i).traceId(),
                refs[i].queue()));
      } else {
        results.add(
            new PushResult(
                PushResult.Status.DUPLICATE,
                txns.get(i),
                owner != null ? owner : messageIds[w],
                refs[i].partitionId(),
                null,
                refs[i].queue()));
      }
    }
    return results;
  }

  private static SegmentWrite encode(Group g) {
    return new SegmentWrite(
        g.partitionId,
        SegmentCodec.encode(g.frames),
        g.frames.stream().map(Frame::transactionId).toList(),
        g.frames.stream().map(Frame::messageId).toList());
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
