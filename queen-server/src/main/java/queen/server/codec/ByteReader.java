package queen.server.codec;

import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.UUID;

/** Bounds-checked reader: running off the end is a corrupt segment, never an index error. */
final class ByteReader {
  private final byte[] buf;
  private final int limit;
  private int pos;

  ByteReader(byte[] buf, int offset, int limit) {
    this.buf = buf;
    this.pos = offset;
    this.limit = limit;
  }

  int position() {
    return pos;
  }

  int remaining() {
    return limit - pos;
  }

  private void need(int n) {
    if (n < 0 || n > limit - pos) {
      throw new CorruptSegmentException("segment truncated: need " + n + " bytes at " + pos);
    }
  }

  int u8() {
    need(1);
    return buf[pos++] & 0xFF;
  }

  int u32() {
    return (int) bigEndian(4);
  }

  long i64() {
    return bigEndian(8);
  }

  private long bigEndian(int bytes) {
    need(bytes);
    long v = 0;
    for (int i = 0; i < bytes; i++) {
      v = (v << 8) | (buf[pos++] & 0xFF);
    }
    return v;
  }

  int varintInt() {
    int v = 0;
    for (int shift = 0; shift < 35; shift += 7) {
      int b = u8();
      v |= (b & 0x7F) << shift;
      if ((b & 0x80) == 0) {
        if (v < 0) {
          throw new CorruptSegmentException("negative length in segment");
        }
        return v;
      }
    }
    throw new CorruptSegmentException("varint longer than 5 bytes");
  }

  UUID uuid() {
    return new UUID(i64(), i64());
  }

  String string() {
    int n = varintInt();
    need(n);
    String s = new String(buf, pos, n, StandardCharsets.UTF_8);
    pos += n;
    return s;
  }

  byte[] bytes(int n) {
    need(n);
    byte[] b = Arrays.copyOfRange(buf, pos, pos + n);
    pos += n;
    return b;
  }

  void skip(int n) {
    need(n);
    pos += n;
  }
}
