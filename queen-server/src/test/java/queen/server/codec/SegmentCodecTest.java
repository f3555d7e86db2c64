package queen.server.codec;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.ByteArrayOutputStream;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import java.util.UUID;
import java.util.zip.CRC32C;
import org.junit.jupiter.api.Test;

/**
 * Properties of the segment codec over seeded random segments: each failure names its seed, so it
 * replays exactly.
 */
class SegmentCodecTest {
  private static final int SEGMENTS = 300;

  @Test
  void decodeOfEncodeIsIdentity() {
    for (int seed = 0; seed < SEGMENTS; seed++) {
      List<Frame> frames = segment(new Random(seed));
      assertThat(SegmentCodec.decode(SegmentCodec.encode(frames)))
          .as("seed %d", seed)
          .isEqualTo(frames);
    }
  }

  @Test
  void sliceDecodesExactlyTheRequestedFrames() {
    for (int seed = 0; seed < SEGMENTS; seed++) {
      Random r = new Random(seed);
      List<Frame> frames = segment(r);
      int start = r.nextInt(41);
      int take = r.nextInt(41);
      List<Frame> slice = SegmentCodec.decode(SegmentCodec.encode(frames), start, take);
      int from = Math.min(start, frames.size());
      int to = Math.min(start + take, frames.size());
      assertThat(slice).as("seed %d", seed).isEqualTo(frames.subList(from, to));
    }
  }

  @Test
  void everyTruncationIsACleanError() {
    for (int seed = 0; seed < 60; seed++) {
      byte[] blob = SegmentCodec.encode(segment(new Random(seed)));
      for (int len = 0; len < blob.length; len++) {
        byte[] cut = Arrays.copyOf(blob, len);
        assertThatThrownBy(() -> SegmentCodec.decode(cut))
            .as("seed %d truncated to %d of %d bytes", seed, len, blob.length)
            .isInstanceOf(CorruptSegmentException.class);
      }
    }
  }

  @Test
  void everyCorruptedByteIsACleanError() {
    for (int seed = 0; seed < 1000; seed++) {
      Random r = new Random(seed);
      byte[] blob = SegmentCodec.encode(segment(r));
      int at = r.nextInt(blob.length);
      int flip = 1 + r.nextInt(255);
      blob[at] ^= (byte) flip;
      assertThatThrownBy(() -> SegmentCodec.decode(blob))
          .as("seed %d: byte %d of %d xor %d", seed, at, blob.length, flip)
          .isInstanceOf(CorruptSegmentException.class);
    }
  }

  @Test
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

  @Test
  void transactionIdsComeBackCharacterForCharacter() {
    String canonical = "0191e4f8-7c1a-7b3e-9f00-3c2a1b0d9e8f";
    List<String> ids =
        List.of(
            canonical,
            canonical.toUpperCase(),
            "0191E4F8-7c1a-7b3e-9f00-3c2a1b0d9e8f",
            "{" + canonical + "}",
            canonical.replace("-", ""),
            "0191e4f8-7c1a-7b3e-9f00-3c2a1b0d9e8g",
            "0191e4f8+7c1a-7b3e-9f00-3c2a1b0d9e8f",
            "order-42",
            "");
    List<Frame> frames = new ArrayList<>();
    for (String id : ids) {
      frames.add(new Frame(id, null, null, 0, new byte[] {'1'}));
    }
    List<Frame> back = SegmentCodec.decode(SegmentCodec.encode(frames));
    assertThat(back.stream().map(Frame::transactionId).toList()).isEqualTo(ids);
  }

  @Test
  void theRawLengthIsTheDecodedSizeWhetherTheBodyIsCompressedOrNot() {
    String uuid = UUID.randomUUID().toString();
    for (int payload : new int[] {10, 100_000}) {
      byte[] blob =
          SegmentCodec.encode(
              List.of(new Frame(uuid, null, null, 0, "x".repeat(payload).getBytes())));
      // bits, the transaction id as a UUID, the payload's varint length, the payload
      int varint = payload < 128 ? 1 : 3;
      assertThat(SegmentCodec.rawLength(blob)).isEqualTo(1 + 16 + varint + payload);
    }
    assertThat(SegmentCodec.encode(List.of(new Frame(uuid, null, null, 0, new byte[100_000]))))
        .as("the big one is stored compressed")
        .hasSizeLessThan(10_000);
  }

  @Test
  void aCanonicalUuidTransactionIdTakesSixteenBytes() {
    String uuid = UUID.randomUUID().toString();
    byte[] asUuid = SegmentCodec.encode(List.of(new Frame(uuid, null, null, 0, new byte[0])));
    byte[] asText =
        SegmentCodec.encode(List.of(new Frame(uuid.toUpperCase(), null, null, 0, new byte[0])));
    assertThat(asText.length - asUuid.length).isEqualTo(36 + 1 - 16);
  }

  @Test
  void versionOneSegmentsWithTheirFrameTimesAreStillRead() {
    UUID id = UUID.randomUUID();
    UUID trace = UUID.randomUUID();
    byte[] payload = "{\"a\":1}".getBytes(StandardCharsets.UTF_8);
    ByteArrayOutputStream body = new ByteArrayOutputStream();
    body.write(2); // bits: has trace
    body.writeBytes(uuidBytes(id));
    body.write(5);
    body.writeBytes("txn-1".getBytes(StandardCharsets.UTF_8));
    body.writeBytes(uuidBytes(trace));
    body.writeBytes(ByteBuffer.allocate(8).putLong(1_700_000_000_000_000L).array());
    body.write(payload.length);
    body.writeBytes(payload);
    ByteArrayOutputStream blob = new ByteArrayOutputStream();
    blob.write(1); // version 1
    blob.write(0); // raw body
    blob.write(1); // one frame
    blob.write(body.size());
    blob.writeBytes(body.toByteArray());
    CRC32C crc = new CRC32C();
    crc.update(blob.toByteArray());
    blob.writeBytes(ByteBuffer.allocate(4).putInt((int) crc.getValue()).array());

    assertThat(SegmentCodec.decode(blob.toByteArray()))
        .containsExactly(new Frame("txn-1", trace, null, 0, payload));
  }

  @Test
  void unknownVersionIsRefused() {
    byte[] blob = SegmentCodec.encode(List.of(frame(new byte[] {'1'})));
    blob[0] = 3;
    CRC32C crc = new CRC32C();
    crc.update(blob, 0, blob.length - 4);
    ByteBuffer.wrap(blob, blob.length - 4, 4).putInt((int) crc.getValue());
    assertThatThrownBy(() -> SegmentCodec.decode(blob))
        .isInstanceOf(CorruptSegmentException.class)
        .hasMessageContaining("version");
  }

  @Test
  void anEmptySegmentCannotBeEncoded() {
    assertThatThrownBy(() -> SegmentCodec.encode(List.of()))
        .isInstanceOf(IllegalArgumentException.class);
  }

  @Test
  void sizesAroundVarintBoundariesRoundTrip() {
    for (int n : new int[] {0, 1, 127, 128, 129, 16_383, 16_384, 16_385}) {
      List<Frame> frames = List.of(frame(new byte[n]), frame(new byte[128]));
      assertThat(SegmentCodec.decode(SegmentCodec.encode(frames)))
          .as("%d bytes", n)
          .isEqualTo(frames);
    }
  }

  private static Frame frame(byte[] payload) {
    return new Frame(UUID.randomUUID().toString(), null, null, 0, payload);
  }

  private static byte[] uuidBytes(UUID u) {
    return ByteBuffer.allocate(16)
        .putLong(u.getMostSignificantBits())
        .putLong(u.getLeastSignificantBits())
        .array();
  }

  /** 1 to 30 frames with every optional part sometimes present. */
  private static List<Frame> segment(Random r) {
    int n = 1 + r.nextInt(30);
    List<Frame> frames = new ArrayList<>(n);
    for (int i = 0; i < n; i++) {
      frames.add(
          new Frame(
              transactionId(r),
              r.nextBoolean() ? new UUID(r.nextLong(), r.nextLong()) : null,
              r.nextInt(5) < 2 ? text(r, 20) : null,
              r.nextBoolean() ? Frame.FLAG_ENCRYPTED : 0,
              payload(r)));
    }
    return frames;
  }

  private static String transactionId(Random r) {
    return switch (r.nextInt(3)) {
      case 0 -> new UUID(r.nextLong(), r.nextLong()).toString();
      case 1 -> new UUID(r.nextLong(), r.nextLong()).toString().toUpperCase();
      default -> text(r, 60);
    };
  }

  /** JSON-ish text, random bytes, and highly compressible runs, so both body encodings occur. */
  private static byte[] payload(Random r) {
    return switch (r.nextInt(3)) {
      case 0 -> text(r, 300).getBytes(StandardCharsets.UTF_8);
      case 1 -> {
        byte[] b = new byte[r.nextInt(401)];
        r.nextBytes(b);
        yield b;
      }
      default -> {
        byte[] b = new byte[r.nextInt(3001)];
        Arrays.fill(b, (byte) 'a');
        yield b;
      }
    };
  }

  /** Up to {@code max} characters, some outside ASCII and the basic plane. */
  private static String text(Random r, int max) {
    int n = r.nextInt(max + 1);
    StringBuilder b = new StringBuilder(n);
    for (int i = 0; i < n; i++) {
      int kind = r.nextInt(10);
      if (kind < 7) {
        b.append((char) (' ' + r.nextInt(95)));
      } else if (kind < 9) {
        b.append((char) (0xA0 + r.nextInt(0x2000)));
      } else {
        b.appendCodePoint(0x1F300 + r.nextInt(0x200));
      }
    }
    return b.toString();
  }
}
