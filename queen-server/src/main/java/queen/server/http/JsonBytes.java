package queen.server.http;

import com.fasterxml.jackson.core.io.JsonStringEncoder;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.UUID;

/**
 * A JSON writer for the hot responses (pop and push), straight into a byte array. Values that
 * repeat on every message of a batch (partition id, names, lease id) are encoded once by the caller
 * with {@link #literal} and copied; payloads are copied verbatim; UUIDs are written from their
 * bits. Strings are escaped by Jackson's encoder, and only when they need it.
 */
final class JsonBytes {
  private static final byte[] HEX = "0123456789abcdef".getBytes(StandardCharsets.US_ASCII);
  private static final byte[] NULL = "null".getBytes(StandardCharsets.US_ASCII);

  private byte[] buf;
  private int pos;

  JsonBytes(int capacity) {
    buf = new byte[Math.max(64, capacity)];
  }

  /** A string as a quoted JSON literal, escaped where needed. */
  static byte[] literal(String s) {
    if (s == null) {
      return NULL;
    }
    byte[] out = new byte[s.length() + 2];
    out[0] = '"';
    for (int i = 0; i < s.length(); i++) {
      char c = s.charAt(i);
      if (c < 0x20 || c >= 0x7f || c == '"' || c == '\\') {
        byte[] escaped = JsonStringEncoder.getInstance().quoteAsUTF8(s);
        byte[] q = new byte[escaped.length + 2];
        q[0] = '"';
        System.arraycopy(escaped, 0, q, 1, escaped.length);
        q[q.length - 1] = '"';
        return q;
      }
      out[i + 1] = (byte) c;
    }
    out[out.length - 1] = '"';
    return out;
  }

  /** A UUID as a quoted JSON literal, or null. */
  static byte[] literal(UUID u) {
    if (u == null) {
      return NULL;
    }
    byte[] out = new byte[38];
    out[0] = '"';
    hex(out, 1, u.getMostSignificantBits() >>> 32, 8);
    out[9] = '-';
    hex(out, 10, u.getMostSignificantBits() >>> 16, 4);
    out[14] = '-';
    hex(out, 15, u.getMostSignificantBits(), 4);
    out[19] = '-';
    hex(out, 20, u.getLeastSignificantBits() >>> 48, 4);
    out[24] = '-';
    hex(out, 25, u.getLeastSignificantBits(), 12);
    out[37] = '"';
    return out;
  }

  private static void hex(byte[] out, int at, long value, int digits) {
    for (int i = digits - 1; i >= 0; i--) {
      out[at + i] = HEX[(int) (value & 0xF)];
      value >>>= 4;
    }
  }

  /** Bytes as they are: punctuation, field names, encoded literals, raw JSON values. */
  JsonBytes raw(byte[] b) {
    ensure(b.length);
    System.arraycopy(b, 0, buf, pos, b.length);
    pos += b.length;
    return this;
  }

  /** ASCII text known to need no escaping (field names, punctuation). */
  JsonBytes ascii(String s) {
    ensure(s.length());
    for (int i = 0; i < s.length(); i++) {
      buf[pos++] = (byte) s.charAt(i);
    }
    return this;
  }

  JsonBytes string(String s) {
    return raw(literal(s));
  }

  JsonBytes uuid(UUID u) {
    return raw(literal(u));
  }

  JsonBytes number(long n) {
    return ascii(Long.toString(n));
  }

  private void ensure(int extra) {
    if (pos + extra > buf.length) {
      buf = Arrays.copyOf(buf, Math.max(buf.length * 2, pos + extra));
    }
  }

  byte[] toBytes() {
    return Arrays.copyOf(buf, pos);
  }
}
