package queen.server.codec;

import com.github.luben.zstd.Zstd;
import com.github.luben.zstd.ZstdException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.UUID;
import java.util.zip.CRC32C;

/**
 * Encodes the messages of one push to one partition into a segment blob, and back.
 *
 * <p>PostgreSQL never decodes a blob: the broker builds it before the push transaction and slices
 * it after the pop answered. Layout, version 2:
 *
 * <pre>
 *   u8      version (2)
 *   u8      body encoding: 0 = raw, 1 = zstd
 *   varint  frame count
 *   varint  raw body length
 *   bytes   body (raw, or one zstd frame)
 *   u32     CRC32C of every byte before it
 * </pre>
 *
 * PostgreSQL reads the two header varints of segments stored before their decoded size was recorded
 * (R__29_pop_budget.sql): a later version keeps the header's first four fields as they are.
 *
 * <p>A raw frame is: u8 bits (encrypted, has trace, has producer, transaction id is a UUID), the
 * transaction id (16 bytes when it is a UUID in canonical lower-case form, as every Queen client
 * makes them, else varint-prefixed UTF-8), optional 16-byte trace id, optional varint-prefixed
 * producer, varint-prefixed payload. Version 1 frames also carried a 16-byte message id and an i64
 * created-at, which follow from the message's place (see {@link Frame}); they are still read, with
 * those two fields skipped. The checksum covers the stored bytes, header included, and is verified
 * before anything is parsed: a CRC catches every burst of up to 32 bits, so any truncation or
 * corrupted byte is a {@link CorruptSegmentException}, never a wrong message.
 */
public final class SegmentCodec {
  static final int VERSION = 2;
  static final int VERSION_WITH_IDS = 1;
  static final int BODY_RAW = 0;
  static final int BODY_ZSTD = 1;

  /**
   * Bodies shorter than this are stored raw: on a few small JSON messages zstd saves a few hundred
   * bytes at a CPU cost the push path feels; bigger segments compress well and pay for it.
   */
  static final int COMPRESS_THRESHOLD = 1024;

  /** Fast level: pushes are latency-bound and payloads are usually small JSON. */
  static final int ZSTD_LEVEL = 1;

  /** Refuses to allocate for a corrupted header claiming an absurd size. */
  static final int MAX_RAW_BYTES = 1 << 30;

  private static final int BIT_ENCRYPTED = Frame.FLAG_ENCRYPTED;
  private static final int BIT_TRACE = 2;
  private static final int BIT_PRODUCER = 4;
  private static final int BIT_UUID_TXN = 8;
  private static final int BIT_DELETED = Frame.FLAG_DELETED;
  private static final int MIN_FRAME_BYTES = 1 + 1 + 1;

  private SegmentCodec() {}

  /** Encodes frames (at least one) into a blob. */
  public static byte[] encode(List<Frame> frames) {
    if (frames.isEmpty()) {
      throw new IllegalArgumentException("a segment holds at least one frame");
    }
    ByteWriter body = new ByteWriter(frames.size() * 64);
    for (Frame f : frames) {
      writeFrame(body, f);
    }
    byte[] raw = body.toArray();
    int encoding = BODY_RAW;
    byte[] stored = raw;
    if (raw.length >= COMPRESS_THRESHOLD) {
      byte[] packed = Zstd.compress(raw, ZSTD_LEVEL);
      if (packed.length < raw.length) {
        encoding = BODY_ZSTD;
        stored = packed;
      }
    }
    ByteWriter out = new ByteWriter(stored.length + 16);
    out.u8(VERSION);
    out.u8(encoding);
    out.varint(frames.size());
    out.varint(raw.length);
    out.bytes(stored, 0, stored.length);
    out.u32(out.crc32c());
    return out.toArray();
  }

  /**
   * The decoded size of a blob's frames, read from its header: what slicing it takes in memory. For
   * blobs this codec made; a corrupt header is a {@link CorruptSegmentException}.
   */
  public static int rawLength(byte[] blob) {
    if (blob.length < 8) {
      throw new CorruptSegmentException("segment truncated: " + blob.length + " bytes");
    }
    ByteReader header = new ByteReader(blob, 0, blob.length - 4);
    header.u8();
    header.u8();
    header.varintInt();
    return header.varintInt();
  }

  /** Decodes every frame of a blob. */
  public static List<Frame> decode(byte[] blob) {
    return decode(blob, 0, Integer.MAX_VALUE);
  }

  /**
   * Decodes frames {@code [start, start + take)} of a blob, the slice a pop delivers. Frames before
   * {@code start} are skipped without materialising them; {@code take} is capped by the count.
   */
  public static List<Frame> decode(byte[] blob, int start, int take) {
    return open(blob).frames(start, take);
  }

  /**
   * Checks a blob and decodes its body once, with the place of every frame, so that any slice of it
   * is read without decompressing or walking it again ({@link Body#frames}).
   */
  public static Body open(byte[] blob) {
    int bodyEnd = blob.length - 4;
    if (bodyEnd < 4) {
      throw new CorruptSegmentException("segment truncated: " + blob.length + " bytes");
    }
    if (crc32c(blob, bodyEnd) != new ByteReader(blob, bodyEnd, blob.length).u32()) {
      throw new CorruptSegmentException("segment checksum mismatch");
    }
    ByteReader header = new ByteReader(blob, 0, bodyEnd);
    int version = header.u8();
    if (version != VERSION && version != VERSION_WITH_IDS) {
      throw new CorruptSegmentException("unknown segment version " + version);
    }
    boolean v1 = version == VERSION_WITH_IDS;
    int encoding = header.u8();
    int count = header.varintInt();
    int rawLength = header.varintInt();
    if (rawLength > MAX_RAW_BYTES || (long) count * MIN_FRAME_BYTES > rawLength || count == 0) {
      throw new CorruptSegmentException(
          "implausible segment header: " + count + " frames in " + rawLength + " bytes");
    }
    byte[] raw = body(blob, header.position(), bodyEnd, encoding, rawLength);
    ByteReader in = new ByteReader(raw, 0, raw.length);
    int[] starts = new int[count];
    for (int i = 0; i < count; i++) {
      starts[i] = in.position();
      skipFrame(in, v1);
    }
    if (in.remaining() != 0) {
      throw new CorruptSegmentException(in.remaining() + " trailing bytes after the last frame");
    }
    return new Body(raw, starts, v1);
  }

  /** A segment's decoded body and where each of its frames begins. */
  public static final class Body {
    private final byte[] raw;
    private final int[] starts;
    private final boolean v1;

    private Body(byte[] raw, int[] starts, boolean v1) {
      this.raw = raw;
      this.starts = starts;
      this.v1 = v1;
    }

    public int count() {
      return starts.length;
    }

    /** The heap it holds, about: the body and the frames' places. */
    public long bytes() {
      return raw.length + 4L * starts.length + 64;
    }

    /** Frames {@code [start, start + take)}, {@code take} capped by the count. */
    public List<Frame> frames(int start, int take) {
      if (start < 0 || take < 0) {
        throw new IllegalArgumentException("negative slice: " + start + "+" + take);
      }
      int end = (int) Math.min((long) start + take, starts.length);
      List<Frame> frames = new ArrayList<>(Math.max(0, end - start));
      for (int i = start; i < end; i++) {
        frames.add(readFrame(new ByteReader(raw, starts[i], raw.length), v1));
      }
      return frames;
    }
  }

  private static byte[] body(byte[] blob, int offset, int end, int encoding, int rawLength) {
    int storedLength = end - offset;
    switch (encoding) {
      case BODY_RAW -> {
        if (storedLength != rawLength) {
          throw new CorruptSegmentException(
              "raw body is " + storedLength + " bytes, header says " + rawLength);
        }
        return Arrays.copyOfRange(blob, offset, end);
      }
      case BODY_ZSTD -> {
        byte[] raw = new byte[rawLength];
        try {
          long n = Zstd.decompressByteArray(raw, 0, rawLength, blob, offset, storedLength);
          if (Zstd.isError(n) || n != rawLength) {
            throw new CorruptSegmentException(
                "zstd body inflated to " + n + " bytes, header says " + rawLength);
          }
        } catch (ZstdException e) {
          throw new CorruptSegmentException("zstd body cannot be decompressed", e);
        }
        return raw;
      }
      default -> throw new CorruptSegmentException("unknown body encoding " + encoding);
    }
  }

  private static void writeFrame(ByteWriter out, Frame f) {
    int bits = f.flags();
    if (f.traceId() != null) {
      bits |= BIT_TRACE;
    }
    if (f.producerSub() != null) {
      bits |= BIT_PRODUCER;
    }
    UUID txnUuid = CanonicalUuid.parse(f.transactionId());
    if (txnUuid != null) {
      bits |= BIT_UUID_TXN;
    }
    out.u8(bits);
    if (txnUuid != null) {
      out.uuid(txnUuid);
    } else {
      out.string(f.transactionId());
    }
    if (f.traceId() != null) {
      out.uuid(f.traceId());
    }
    if (f.producerSub() != null) {
      out.string(f.producerSub());
    }
    out.varint(f.payload().length);
    out.bytes(f.payload(), 0, f.payload().length);
  }

  private static Frame readFrame(ByteReader in, boolean v1) {
    int bits = in.u8();
    if ((bits & ~(BIT_ENCRYPTED | BIT_TRACE | BIT_PRODUCER | BIT_UUID_TXN | BIT_DELETED)) != 0) {
      throw new CorruptSegmentException("unknown frame bits " + bits);
    }
    if (v1) {
      in.skip(16); // message id
    }
    String txn = (bits & BIT_UUID_TXN) != 0 ? in.uuid().toString() : in.string();
    UUID trace = (bits & BIT_TRACE) != 0 ? in.uuid() : null;
    String producer = (bits & BIT_PRODUCER) != 0 ? in.string() : null;
    if (v1) {
      in.skip(8); // created-at
    }
    byte[] payload = in.bytes(in.varintInt());
    return new Frame(txn, trace, producer, bits & (BIT_ENCRYPTED | BIT_DELETED), payload);
  }

  private static void skipFrame(ByteReader in, boolean v1) {
    int bits = in.u8();
    if (v1) {
      in.skip(16);
    }
    in.skip((bits & BIT_UUID_TXN) != 0 ? 16 : in.varintInt());
    if ((bits & BIT_TRACE) != 0) {
      in.skip(16);
    }
    if ((bits & BIT_PRODUCER) != 0) {
      in.skip(in.varintInt());
    }
    if (v1) {
      in.skip(8);
    }
    in.skip(in.varintInt());
  }

  static int crc32c(byte[] data, int length) {
    CRC32C crc = new CRC32C();
    crc.update(data, 0, length);
    return (int) crc.getValue();
  }
}
