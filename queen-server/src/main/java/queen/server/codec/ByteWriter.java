package queen.server.codec;

import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.UUID;

/** Growable big-endian writer; the codec's only allocation per segment besides the result. */
final class ByteWriter {
  private byte[] buf;
  private int pos;

  ByteWriter(int capacity) {
    buf = new byte[Math.max(16, capacity)];
  }

  private void ensure(int extra) {
    if (pos + extra > buf.length) {
      buf = Arrays.copyOf(buf, Math.max(buf.length * 2, pos + extra));
    }
  }

  void u8(int v) {
    ensure(1);
    buf[pos++] = (byte) v;
  }

  void u32(int v) {
    ensure(4);
    for (int shift = 24; shift >= 0; shift -= 8) {
      buf[pos++] = (byte) (v >>> shift);
    }
  }

  void i64(long v) {
    ensure(8);
    for (int shift = 56; shift >= 0; shift -= 8) {
      buf[pos++] = (byte) (v >>> shift);
    }
  }

  void varint(int v) {
    ensure(5);
    while ((v & ~0x7F) != 0) {
      buf[pos++] = (byte) ((v & 0x7F) | 0x80);
      v >>>= 7;
    }
    buf[pos++] = (byte) v;
  }

  void uuid(UUID u) {
    i64(u.getMostSignificantBits());
    i64(u.getLeastSignificantBits());
  }

  void string(String s) {
    byte[] b = s.getBytes(StandardCharsets.UTF_8);
    varint(b.length);
    bytes(b, 0, b.length);
  }

  void bytes(byte[] b, int off, int len) {
    ensure(len);
    System.arraycopy(b, off, buf, pos, len);
    pos += len;
  }

  int crc32c() {
    return SegmentCodec.crc32c(buf, pos);
  }

  byte[] toArray() {
    return Arrays.copyOf(buf, pos);
  }
}
