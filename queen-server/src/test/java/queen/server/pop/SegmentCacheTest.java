package queen.server.pop;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;
import queen.server.BrokerConfig;
import queen.server.codec.Frame;
import queen.server.codec.SegmentCodec;
import queen.server.store.PartitionClaim;
import queen.server.store.PopStore.SegmentKey;
import queen.server.store.SegmentSlice;
import queen.server.store.Verdict;

/** Decoded segments kept between the pops that take one push a part at a time. */
class SegmentCacheTest {
  private static final UUID PARTITION = UUID.randomUUID();
  private static final Instant CREATED = Instant.parse("2026-12-06T03:00:00.123456Z");

  private final SimpleMeterRegistry meters = new SimpleMeterRegistry();

  private static List<Frame> frames(int count, int payloadBytes) {
    return IntStream.range(0, count)
        .mapToObj(
            i -> {
              byte[] payload = new byte[payloadBytes];
              byte[] n = ("{\"n\":" + i + "}").getBytes(StandardCharsets.UTF_8);
              System.arraycopy(n, 0, payload, 0, Math.min(n.length, payloadBytes));
              return new Frame("t" + i, null, null, 0, payload);
            })
        .toList();
  }

  private static SegmentSlice slice(long base, byte[] blob, int start, int take, int count) {
    return new SegmentSlice(base, start, take, count, CREATED, blob);
  }

  /** The frames of one slice of PARTITION's segment, as a pop that claimed only it reads them. */
  private static List<Frame> frames(SegmentCache cache, SegmentSlice slice) {
    return cache
        .frames(
            List.of(delivered(PARTITION, slice)),
            keys -> {
              throw new AssertionError("a blob read: " + keys);
            })
        .getFirst();
  }

  private double hits() {
    return meters.counter("queen_segment_cache_hits_total").count();
  }

  @Test
  void theSlicesOfOnePushAreTheFramesItHeldReadOnceDecoded() {
    List<Frame> stored = frames(100, 40);
    byte[] blob = SegmentCodec.encode(stored);
    SegmentCache cache = new SegmentCache(1 << 20, meters);
    List<Frame> read = new ArrayList<>();
    for (int start = 0; start < 100; start += 3) {
      read.addAll(frames(cache, slice(500, blob, start, 3, 100)));
    }
    assertThat(read).isEqualTo(stored);
    assertThat(hits()).as("every slice after the first").isEqualTo(33);
    assertThat(cache.bytes()).as("the last slice took the segment's end").isZero();
  }

  @Test
  void aRewrittenBlobIsDecodedAgainNotAnsweredFromTheOldOne() {
    List<Frame> stored = frames(10, 40);
    byte[] blob = SegmentCodec.encode(stored);
    SegmentCache cache = new SegmentCache(1 << 20, meters);
    assertThat(frames(cache, slice(0, blob, 0, 1, 10))).containsExactly(stored.get(0));

    // a message delete rewrites the segment with the frame's remains in its place
    List<Frame> rewritten = new ArrayList<>(stored);
    rewritten.set(1, stored.get(1).deleted());
    byte[] again = SegmentCodec.encode(rewritten);
    assertThat(frames(cache, slice(0, again, 1, 1, 10)).getFirst().isDeleted()).isTrue();
    assertThat(hits()).isZero();

    // and another segment at the same place (a queue made again) is not this one either
    List<Frame> other = frames(10, 41);
    SegmentSlice elsewhere =
        new SegmentSlice(0, 2, 1, 10, CREATED.plusSeconds(1), SegmentCodec.encode(other));
    assertThat(frames(cache, elsewhere)).containsExactly(other.get(2));
    assertThat(hits()).isZero();
  }

  @Test
  void aBlobRewrittenToTheSameLengthIsToldApartByItsChecksum() {
    List<Frame> stored = frames(5, 20); // under 1 KiB: stored raw, so one byte changes one byte
    byte[] blob = SegmentCodec.encode(stored);
    SegmentCache cache = new SegmentCache(1 << 20, meters);
    frames(cache, slice(0, blob, 0, 1, 5));
    List<Frame> changed = new ArrayList<>(stored);
    byte[] payload = stored.get(1).payload().clone();
    payload[payload.length - 1] = 'z';
    changed.set(1, new Frame("t1", null, null, 0, payload));
    byte[] again = SegmentCodec.encode(changed);
    assertThat(again).hasSameSizeAs(blob);
    assertThat(frames(cache, slice(0, again, 1, 1, 5))).containsExactly(changed.get(1));
    assertThat(hits()).isZero();
  }

  @Test
  void aBoundOverAQuarterOfTheHeapIsRefusedNamingIt() {
    assertThatThrownBy(
            () -> BrokerConfig.fromEnv(java.util.Map.of("QUEEN_SEGMENT_CACHE_MB", "65536")))
        .isInstanceOf(BrokerConfig.InvalidConfigException.class)
        .hasMessageStartingWith("QUEEN_SEGMENT_CACHE_MB 65536 is more than a quarter of the heap");
    // unset on a 61 MiB heap (a 256 MiB container's), the default of 16 MiB stopped the broker
    assertThat(BrokerConfig.segmentCacheBytes(java.util.Map.of(), 61)).isEqualTo(15L << 20);
    assertThat(BrokerConfig.segmentCacheBytes(java.util.Map.of(), 4096)).isEqualTo(16L << 20);
    assertThatThrownBy(
            () ->
                BrokerConfig.segmentCacheBytes(
                    java.util.Map.of("QUEEN_SEGMENT_CACHE_MB", "16"), 61))
        .isInstanceOf(BrokerConfig.InvalidConfigException.class);
  }

  @Test
  void itHoldsNoMoreThanItsBoundOldestOut() {
    byte[] blob = SegmentCodec.encode(frames(50, 1000));
    long one = SegmentCodec.open(blob).bytes();
    SegmentCache cache = new SegmentCache(4 * one + one / 2, meters);
    for (int s = 0; s < 10; s++) {
      frames(cache, slice(s * 50L, blob, 0, 1, 50));
      assertThat(cache.bytes()).isLessThanOrEqualTo(4 * one + one / 2);
    }
    assertThat(cache.bytes()).isEqualTo(4 * one);
    frames(cache, slice(9 * 50L, blob, 1, 1, 50));
    assertThat(hits()).as("the newest stayed").isEqualTo(1);
    frames(cache, slice(0, blob, 1, 1, 50));
    assertThat(hits()).as("the oldest left").isEqualTo(1);
  }

  @Test
  void aSegmentBiggerThanAQuarterOfTheBoundOrABoundOfZeroKeepsNothing() {
    byte[] blob = SegmentCodec.encode(frames(50, 1000));
    long one = SegmentCodec.open(blob).bytes();
    for (long bound : new long[] {0, 4 * one - 1}) {
      SegmentCache cache = new SegmentCache(bound, meters);
      frames(cache, slice(0, blob, 0, 1, 50));
      assertThat(cache.bytes()).as("bound %d", bound).isZero();
    }
  }

  /** What queen.pop_blob sends in place of a blob: version 0, its length, its last four bytes. */
  private static byte[] stub(byte[] blob) {
    return java.nio.ByteBuffer.allocate(9)
        .put((byte) 0)
        .putInt(blob.length)
        .put(blob, blob.length - 4, 4)
        .array();
  }

  private static PartitionClaim delivered(UUID partition, SegmentSlice slice) {
    return new PartitionClaim(
        partition, "p", "q", Verdict.DELIVERED, null, 1, new ArrayList<>(List.of(slice)));
  }

  @Test
  void stubsItDoesNotHoldAreReadInOneCallAndASegmentGoneSinceHasNoFrames() {
    List<Frame> stored = frames(20, 600);
    byte[] blob = SegmentCodec.encode(stored);
    SegmentCache cache = new SegmentCache(1 << 20, meters);
    UUID gone = UUID.randomUUID();
    List<List<SegmentKey>> calls = new ArrayList<>();
    List<List<Frame>> read =
        cache.frames(
            List.of(
                delivered(PARTITION, slice(7, stub(blob), 5, 3, 20)),
                delivered(gone, slice(9, stub(blob), 2, 2, 20))),
            keys -> {
              calls.add(List.copyOf(keys));
              return Map.of(new SegmentKey(PARTITION, 7), blob);
            });
    assertThat(calls)
        .containsExactly(List.of(new SegmentKey(PARTITION, 7), new SegmentKey(gone, 9)));
    assertThat(read.get(0)).isEqualTo(stored.subList(5, 8));
    assertThat(read.get(1)).as("deleted since its claim").isEmpty();

    List<List<Frame>> next =
        cache.frames(
            List.of(delivered(PARTITION, slice(7, stub(blob), 8, 2, 20))),
            keys -> {
              throw new AssertionError("read again: " + keys);
            });
    assertThat(next.getFirst()).as("the blob read is kept").isEqualTo(stored.subList(8, 10));
  }

  /** Frames whose payloads are random letters: their blob stays about as big as they are. */
  private static List<Frame> incompressible(int count, int payloadBytes) {
    java.util.Random random = new java.util.Random(7);
    return IntStream.range(0, count)
        .mapToObj(
            i -> {
              byte[] payload = new byte[payloadBytes];
              for (int b = 0; b < payloadBytes; b++) {
                payload[b] = (byte) ('a' + random.nextInt(26));
              }
              return new Frame("t" + i, null, null, 0, payload);
            })
        .toList();
  }

  @Test
  void whileTheStubsItGetsAreMostlyNotHeldHereItAsksForBlobs() {
    byte[] blob = SegmentCodec.encode(incompressible(40, 600));
    assertThat(blob.length).isGreaterThanOrEqualTo(SegmentSlice.STUBBED_FROM);
    SegmentCache cache = new SegmentCache(1 << 20, meters);
    assertThat(cache.keptBytes()).as("a quarter of its bound").isEqualTo(256 << 10);

    // a stub of a push decoded elsewhere costs a second call
    cache.frames(
        List.of(delivered(PARTITION, slice(1, stub(blob), 1, 1, 40))),
        keys -> Map.of(new SegmentKey(PARTITION, 1), blob));
    assertThat(cache.keptBytes()).as("more stubs missed than held: blobs").isZero();

    // the next slices, sent whole, find the push that call read kept: stubs pay again
    frames(cache, slice(1, blob, 2, 1, 40));
    assertThat(cache.keptBytes()).isEqualTo(256 << 10);
  }
}
