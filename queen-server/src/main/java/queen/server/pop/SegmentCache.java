package queen.server.pop;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.ReentrantLock;
import queen.server.codec.CorruptSegmentException;
import queen.server.codec.Frame;
import queen.server.codec.SegmentCodec;
import queen.server.store.PartitionClaim;
import queen.server.store.PopStore.SegmentKey;
import queen.server.store.SegmentSlice;
import queen.server.store.Verdict;

/**
 * Decoded bodies of segments that a pop took only part of, kept for the pops that take the rest.
 * One push is one segment, however many messages it holds: without this, consumers taking one
 * message at a time out of a push of 1,000 decompressed and walked the whole push for every message
 * (docs/benchmarks.md, "A push read once"). PostgreSQL sends the pops after the first of a big push
 * a stub instead of its blob ({@link SegmentSlice#leftOut}), which an entry answers; a stub this
 * cache cannot answer costs a second read ("A big push sent once").
 *
 * <p>An entry answers only for the blob it was decoded from: same segment, same created_at, same
 * length and stored checksum (a message delete rewrites its segment's blob). A hit compares the
 * checksum the blob carries; it does not compute it again over the bytes PostgreSQL sent, which the
 * decode that made the entry verified. Bounded by the heap its entries hold, least recently used
 * first out; a segment too big for a quarter of the bound is not kept, and one whose last message a
 * pop took leaves.
 */
public final class SegmentCache {
  private record Key(UUID partition, long baseOffset) {}

  private record Entry(Instant createdAt, int length, int checksum, SegmentCodec.Body body) {
    boolean decodes(SegmentSlice slice) {
      return slice.storedLength() == length
          && slice.storedChecksum() == checksum
          && slice.createdAt().equals(createdAt);
    }
  }

  /**
   * Reads the stored blobs of segments whose pops got a stub ({@link
   * queen.server.store.PopStore#blobs}).
   */
  public interface BlobReader {
    Map<SegmentKey, byte[]> read(Collection<SegmentKey> keys);
  }

  private final long capacity;
  private final ReentrantLock lock = new ReentrantLock();
  private final LinkedHashMap<Key, Entry> entries = new LinkedHashMap<>(64, 0.75f, true);
  private long bytes;
  private final Counter hits;
  private final Counter misses;
  private final Counter reads;

  /** Bounds {@code stubbing}: after a change of load, its sign follows within this many slices. */
  private static final int STUB_SCORE = 32;

  /** Plus one for a stubbable slice held here, minus one for one not: stubs while not negative. */
  private final AtomicInteger stubbing = new AtomicInteger();

  /**
   * {@code capacity}: the heap its entries may hold, in bytes (QUEEN_SEGMENT_CACHE_MB); 0 is off.
   */
  public SegmentCache(long capacity, MeterRegistry meters) {
    this.capacity = capacity;
    this.hits =
        Counter.builder("queen_segment_cache_hits_total")
            .description("Pop slices read from a segment decoded by an earlier pop")
            .register(meters);
    this.misses =
        Counter.builder("queen_segment_cache_misses_total")
            .description("Pop slices of segments decoded anew")
            .register(meters);
    this.reads =
        Counter.builder("queen_segment_blob_reads_total")
            .description(
                "Blobs read in a second call: PostgreSQL sent a stub of a segment this broker"
                    + " did not hold decoded")
            .register(meters);
    Gauge.builder("queen_segment_cache_bytes", this, SegmentCache::bytes)
        .description("Heap held by decoded segments kept for the pops that take the rest")
        .register(meters);
  }

  /**
   * The largest segment, decoded, that this cache keeps (a quarter of its bound), for PostgreSQL to
   * send the pops after the first of such a segment a stub instead of its blob; 0 (blobs always)
   * when the cache is off, or while it has lately held fewer than half the segments such pops took:
   * a stub it does not hold costs a second call, where the blob came in the first.
   */
  public long keptBytes() {
    return stubbing.get() >= 0 ? keepable() : 0;
  }

  private long keepable() {
    return capacity / 4;
  }

  /** Counts a slice that PostgreSQL sends a stub of when asked ({@code eligible}): held here? */
  private void stubbable(boolean eligible, boolean held) {
    if (eligible) {
      stubbing.getAndUpdate(s -> held ? Math.min(s + 1, STUB_SCORE) : Math.max(s - 1, -STUB_SCORE));
    }
  }

  /**
   * The frames of every delivered slice of the claims, in their order. Stubs this cache cannot
   * answer have their blobs read by {@code reader}, all in one call (a statement per partition); a
   * segment deleted since its claim (retention) has no frames. Only leased pops get stubs (an
   * autoAck claim has committed before this read): a lease keeps what a failed read did not
   * deliver.
   */
  List<List<Frame>> frames(List<PartitionClaim> claims, BlobReader reader) {
    record Unread(int at, PartitionClaim claim, SegmentKey key, SegmentSlice slice) {}
    List<List<Frame>> frames = new ArrayList<>();
    List<Unread> unread = new ArrayList<>();
    for (PartitionClaim claim : claims) {
      if (claim.verdict() != Verdict.DELIVERED) {
        continue;
      }
      for (SegmentSlice slice : claim.slices()) {
        List<Frame> read = frames(claim, slice, true);
        if (read == null) {
          SegmentKey key = new SegmentKey(claim.partitionId(), slice.baseOffset());
          unread.add(new Unread(frames.size(), claim, key, slice));
        }
        frames.add(read);
      }
    }
    if (!unread.isEmpty()) {
      Map<SegmentKey, byte[]> blobs =
          reader.read(new LinkedHashSet<>(unread.stream().map(Unread::key).toList()));
      reads.increment(blobs.size());
      for (Unread u : unread) {
        byte[] blob = blobs.get(u.key());
        frames.set(
            u.at(), blob == null ? List.of() : frames(u.claim(), u.slice().withBlob(blob), false));
      }
    }
    return frames;
  }

  /**
   * The frames of a slice of the claim's partition; a push that cannot be decoded is named, so that
   * an operator can find it and seek the group past it.
   */
  private List<Frame> frames(PartitionClaim claim, SegmentSlice slice, boolean claimed) {
    try {
      return frames(claim.partitionId(), slice, claimed);
    } catch (CorruptSegmentException e) {
      throw new UnreadablePushException(
          "the push stored at offset "
              + slice.baseOffset()
              + " of partition "
              + claim.partition()
              + " ("
              + claim.partitionId()
              + ") of queue "
              + claim.queue()
              + " cannot be read ("
              + e.getMessage()
              + "): every leased pop of it fails until the consumer group is seeked past it"
              + " (docs/admin.md)",
          claim.partitionId(),
          slice.baseOffset(),
          e);
    }
  }

  /**
   * The frames of a slice of the partition's segment; null for a stub this cache cannot answer.
   * {@code claimed}: the slice as the pop got it, not its blob read after a stub.
   */
  private List<Frame> frames(UUID partition, SegmentSlice slice, boolean claimed) {
    Key key = new Key(partition, slice.baseOffset());
    boolean last = slice.startIdx() + slice.take() >= slice.msgCount();
    Entry kept = capacity > 0 ? take(key, last) : null;
    // a slice PostgreSQL sends a stub of when asked: past the first frame of a big blob that fits
    boolean eligible =
        claimed && slice.startIdx() > 0 && slice.storedLength() >= SegmentSlice.STUBBED_FROM;
    if (kept != null && kept.decodes(slice)) {
      stubbable(eligible, true);
      hits.increment();
      return kept.body().frames(slice.startIdx(), slice.take());
    }
    if (slice.leftOut()) {
      stubbable(eligible, false);
      return null;
    }
    misses.increment();
    SegmentCodec.Body body = SegmentCodec.open(slice.blob());
    boolean fits = body.bytes() <= keepable();
    stubbable(eligible && fits, false);
    if (!last && fits) {
      keep(key, new Entry(slice.createdAt(), slice.storedLength(), slice.storedChecksum(), body));
    }
    return body.frames(slice.startIdx(), slice.take());
  }

  /** The entry of a key; removed when this slice reads the segment to its end. */
  private Entry take(Key key, boolean last) {
    lock.lock();
    try {
      Entry e = last ? entries.remove(key) : entries.get(key);
      if (e != null && last) {
        bytes -= e.body().bytes();
      }
      return e;
    } finally {
      lock.unlock();
    }
  }

  private void keep(Key key, Entry entry) {
    lock.lock();
    try {
      Entry before = entries.put(key, entry);
      bytes += entry.body().bytes() - (before == null ? 0 : before.body().bytes());
      Iterator<Map.Entry<Key, Entry>> oldest = entries.entrySet().iterator();
      while (bytes > capacity && oldest.hasNext()) {
        bytes -= oldest.next().getValue().body().bytes();
        oldest.remove();
      }
    } finally {
      lock.unlock();
    }
  }

  long bytes() {
    lock.lock();
    try {
      return bytes;
    } finally {
      lock.unlock();
    }
  }
}
