package queen.server.push;

import java.time.Instant;
import java.time.InstantSource;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import queen.server.codec.Frame;
import queen.server.codec.SegmentCodec;
import queen.server.codec.UuidV7;
import queen.server.store.AppendOutcome;
import queen.server.store.PartitionKey;
import queen.server.store.PartitionMissingException;
import queen.server.store.PartitionRef;
import queen.server.store.PushStore;
import queen.server.store.SegmentWrite;

/**
 * Turns a push request into one segment per (queue, partition) and appends them atomically.
 *
 * <p>Dedup is per (partition, transactionId): inside one request the first item with a key wins and
 * later ones report the winner's message id; against stored messages the partition's own lock
 * decides (see {@link PushStore#append}). Segments are appended in partition-id order, the same
 * order every pusher uses, so concurrent multi-partition pushes cannot deadlock.
 */
public final class PushService {
  /** PostgreSQL orders uuids by unsigned bytes; locking in that order everywhere avoids cycles. */
  private static final Comparator<UUID> PG_UUID_ORDER =
      Comparator.comparing((UUID u) -> u.getMostSignificantBits(), Long::compareUnsigned)
          .thenComparing(UUID::getLeastSignificantBits, Long::compareUnsigned);

  private final PushStore store;
  private final PartitionDirectory directory;
  private final InstantSource clock;
  private final UuidV7 ids;

  public PushService(PushStore store, PartitionDirectory directory, InstantSource clock) {
    this.store = store;
    this.directory = directory;
    this.clock = clock;
    this.ids = new UuidV7(clock);
  }

  /** Stores the items; results are in input order. */
  public List<PushResult> push(List<PushItem> items) {
    if (items.isEmpty()) {
      return List.of();
    }
    List<String> txns = new ArrayList<>(items.size());
    for (PushItem item : items) {
      String t = item.transactionId();
      txns.add(t == null || t.isEmpty() ? ids.next().toString() : t);
    }
    try {
      return pushOnce(items, txns);
    } catch (PartitionMissingException e) {
      directory.forget();
      return pushOnce(items, txns);
    }
  }

  private List<PushResult> pushOnce(List<PushItem> items, List<String> txns) {
    Map<PartitionKey, PartitionRef> refs =
        directory.resolve(
            items.stream().map(i -> new PartitionKey(i.queue(), i.partition())).toList());
    long micros = toMicros(clock.instant());

    Map<UUID, Group> groups = new TreeMap<>(PG_UUID_ORDER);
    int[] winner = new int[items.size()];
    UUID[] messageIds = new UUID[items.size()];
    PartitionRef[] itemRefs = new PartitionRef[items.size()];
    for (int i = 0; i < items.size(); i++) {
      PushItem item = items.get(i);
      PartitionRef ref = refs.get(new PartitionKey(item.queue(), item.partition()));
      itemRefs[i] = ref;
      Group g = groups.computeIfAbsent(ref.partitionId(), Group::new);
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
                micros,
                0,
                item.payload()));
      }
    }

    List<Group> ordered = List.copyOf(groups.values());
    List<SegmentWrite> writes = ordered.stream().map(PushService::encode).toList();
    List<AppendOutcome> outcomes =
        store.append(writes, (seg, dups) -> encodeWithout(groups.get(seg.partitionId()), dups));

    Map<Integer, UUID> storedOwner = new HashMap<>();
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
      PartitionRef ref = itemRefs[i];
      if (w == i && owner == null) {
        results.add(
            new PushResult(
                PushResult.Status.QUEUED,
                txns.get(i),
                messageIds[i],
                ref.partitionId(),
                items.get(i).traceId(),
                ref.queue()));
      } else {
        results.add(
            new PushResult(
                PushResult.Status.DUPLICATE,
                txns.get(i),
                owner != null ? owner : messageIds[w],
                ref.partitionId(),
                null,
                ref.queue()));
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

  private static SegmentWrite encodeWithout(Group g, Set<String> duplicates) {
    g.frames.removeIf(f -> duplicates.contains(f.transactionId()));
    return g.frames.isEmpty() ? null : encode(g);
  }

  private static long toMicros(Instant t) {
    return TimeUnit.SECONDS.toMicros(t.getEpochSecond()) + t.getNano() / 1_000;
  }

  /** The items of one request bound for one partition, deduplicated by transaction id. */
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
