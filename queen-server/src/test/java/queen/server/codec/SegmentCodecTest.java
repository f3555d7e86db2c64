package queen.server.codec;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.UUID;
import java.util.zip.CRC32C;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.Example;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.constraints.IntRange;
import net.jqwik.api.constraints.Size;

class SegmentCodecTest {

  @Property
  void decodeOfEncodeIsIdentity(@ForAll("segments") List<Frame> frames) {
    assertThat(SegmentCodec.decode(SegmentCodec.encode(frames))).isEqualTo(frames);
  }

  @Property
  void sliceDecodesExactlyTheRequestedFrames(
      @ForAll("segments") List<Frame> frames,
      @ForAll @IntRange(min = 0, max = 40) int start,
      @ForAll @IntRange(min = 0, max = 40) int take) {
    List<Frame> slice = SegmentCodec.decode(SegmentCodec.encode(frames), start, take);
    int from = Math.min(start, frames.size());
    int to = Math.min(start + take, frames.size());
    assertThat(slice).isEqualTo(frames.subList(from, to));
  }

  @Property(tries = 200)
  void everyTruncationIsACleanError(@ForAll("segments") List<Frame> frames) {
    byte[] blob = SegmentCodec.encode(frames);
    for (int len = 0; len < blob.length; len++) {
      byte[] cut = Arrays.copyOf(blob, len);
      assertThatThrownBy(() -> SegmentCodec.decode(cut))
          .as("truncated to %d of %d bytes", len, blob.length)
          .isInstanceOf(CorruptSegmentException.class);
    }
  }

  @Property(tries = 1000)
  void everyCorruptedByteIsACleanError(
      @ForAll("segments") List<Frame> frames,
      @ForAll @IntRange(min = 0, max = 100_000) int where,
      @ForAll @IntRange(min = 1, max = 255) int flip) {
    byte[] blob = SegmentCodec.encode(frames);
    int at = where % blob.length;
    blob[at] ^= (byte) flip;
    assertThatThrownBy(() -> SegmentCodec.decode(blob))
        .as("byte %d of %d xor %d", at, blob.length, flip)
        .isInstanceOf(CorruptSegmentException.class);
  }

  @Example
  void emptyNullUnicodeAndOneMegabytePayloadsRoundTrip() {
    byte[] big = new byte[1 << 20];
    Arrays.fill(big, (byte) 'x');
    big[0] = '"';
    big[big.length - 1] = '"';
    List<Frame> frames =
        List.of(
            frame(new byte[0]),
            frame("null".getBytes(StandardCharsets.UTF_8)),
            frame("{\"k\":\"ünï©ødé 🎉 中文\"}".getBytes(StandardCharsets.UTF_8)),
            frame(big));
    byte[] blob = SegmentCodec.encode(frames);
    assertThat(SegmentCodec.decode(blob)).isEqualTo(frames);
    assertThat(blob.length).as("a 1 MB run of one byte compresses").isLessThan(big.length / 10);
  }

  @Example
  void unknownVersionIsRefused() {
    byte[] blob = SegmentCodec.encode(List.of(frame(new byte[] {'1'})));
    blob[0] = 2;
    CRC32C crc = new CRC32C();
    crc.update(blob, 0, blob.length - 4);
    ByteBuffer.wrap(blob, blob.length - 4, 4).putInt((int) crc.getValue());
    assertThatThrownBy(() -> SegmentCodec.decode(blob))
        .isInstanceOf(CorruptSegmentException.class)
        .hasMessageContaining("version");
  }

  @Example
  void anEmptySegmentCannotBeEncoded() {
    assertThatThrownBy(() -> SegmentCodec.encode(List.of()))
        .isInstanceOf(IllegalArgumentException.class);
  }

  private static Frame frame(byte[] payload) {
    return new Frame(UUID.randomUUID(), UUID.randomUUID().toString(), null, null, 1L, 0, payload);
  }

  @Provide
  Arbitrary<List<Frame>> segments() {
    return frames().list().ofMinSize(1).ofMaxSize(30);
  }

  private static Arbitrary<Frame> frames() {
    Arbitrary<UUID> ids = Arbitraries.randomValue(r -> new UUID(r.nextLong(), r.nextLong()));
    Arbitrary<String> txns = Arbitraries.strings().ofMaxLength(60);
    Arbitrary<UUID> traces = ids.injectNull(0.5);
    Arbitrary<String> subs = Arbitraries.strings().ofMaxLength(20).injectNull(0.6);
    Arbitrary<Long> times = Arbitraries.longs();
    Arbitrary<Integer> flags = Arbitraries.of(0, Frame.FLAG_ENCRYPTED);
    Arbitrary<byte[]> payloads = payloads();
    return Combinators.combine(ids, txns, traces, subs, times, flags, payloads).as(Frame::new);
  }

  /** JSON-ish text, random bytes, and highly compressible runs, so both body encodings occur. */
  private static Arbitrary<byte[]> payloads() {
    Arbitrary<byte[]> text =
        Arbitraries.strings().ofMaxLength(300).map(s -> s.getBytes(StandardCharsets.UTF_8));
    Arbitrary<byte[]> random = Arbitraries.bytes().array(byte[].class).ofMaxSize(400);
    Arbitrary<byte[]> runs =
        Arbitraries.integers()
            .between(0, 3000)
            .map(
                n -> {
                  byte[] b = new byte[n];
                  Arrays.fill(b, (byte) 'a');
                  return b;
                });
    return Arbitraries.oneOf(text, random, runs);
  }

  @Property
  void sizesOfVarintBoundariesRoundTrip(
      @ForAll @Size(max = 3) List<@IntRange(max = 20000) Integer> sizes) {
    List<Frame> frames = new ArrayList<>();
    for (int n : sizes) {
      frames.add(frame(new byte[n]));
    }
    frames.add(frame(new byte[128]));
    assertThat(SegmentCodec.decode(SegmentCodec.encode(frames))).isEqualTo(frames);
  }
}
