package queen.server.pop;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import java.time.Instant;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.locks.ReentrantLock;
import queen.server.codec.Frame;
import queen.server.codec.SegmentCodec;
import queen.server.store.SegmentSlice;

/**
 * Decoded bodies of segments that a pop took only part of, kept for the pops that take the rest.
 * One push is one segment, however many messages it holds, and PostgreSQL hands a pop the whole
 * blob: without this, consumers taking one message at a time out of a push of 1,000 decompressed
 * and walked the whole push for every message (docs/benchmarks.md, "A push read once").
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
      byte[] blob = slice.blob();
      return blob.length == length
          && storedChecksum(blob) == checksum
          && slice.createdAt().equals(createdAt);
    }
  }

  private final long capacity;
  private final ReentrantLock lock = new ReentrantLock();
  private final LinkedHashMap<Key, Entry> entries = new LinkedHashMap<>(64, 0.75f, true);
  private long bytes;
  private final Counter hits;
  private final Counter misses;

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
    Gauge.builder("queen_segment_cache_bytes", this, SegmentCache::bytes)
        .description("Heap held by decoded segments kept for the pops that take the rest")
        .register(meters);
  }

  /** The frames of a slice of the partition's segment. */
  List<Frame> frames(UUID partition, SegmentSlice slice) {
    Key key = new Key(partition, slice.baseOffset());
    boolean last = slice.startIdx() + slice.take() >= slice.msgCount();
    Entry kept = capacity > 0 ? take(key, last) : null;
    if (kept != null && kept.decodes(slice)) {
      hits.increment();
      return kept.body().frames(slice.startIdx(), slice.take());
    }
    misses.increment();
    SegmentCodec.Body body = SegmentCodec.open(slice.blob());
    if (!last && capacity > 0 && body.bytes() <= capacity / 4) {
      keep(
          key,
          new Entry(slice.createdAt(), slice.blob().length, storedChecksum(slice.blob()), body));
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

  /** The checksum a blob ends with (SegmentCodec's layout): a rewritten blob has another. */
  private static int storedChecksum(byte[] blob) {
    int n = blob.length;
    return n < 4
        ? 0
        : (blob[n - 4] & 0xff) << 24
            | (blob[n - 3] & 0xff) << 16
            | (blob[n - 2] & 0xff) << 8
            | (blob[n - 1] & 0xff);
  }
}
