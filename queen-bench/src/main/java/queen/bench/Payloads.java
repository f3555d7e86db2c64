package queen.bench;

import java.nio.charset.StandardCharsets;
import java.util.concurrent.ThreadLocalRandom;

/**
 * Message bodies of a chosen size carrying their send time, so that a consumer can tell how long a
 * message took from the producer's send to its own pop: {@code {"t":123,"p":"xxx..."}}.
 */
final class Payloads {
  private Payloads() {}

  static byte[] of(int size, long sentNanos) {
    String head = "{\"t\":" + sentNanos + ",\"p\":\"";
    int pad = Math.max(0, size - head.length() - 2);
    return (head + "x".repeat(pad) + "\"}").getBytes(StandardCharsets.US_ASCII);
  }

  /**
   * A body of {@code size} bytes padded with random lower-case letters: zstd stores it at about 60%
   * of its size, where a pad of one letter compresses to almost nothing.
   */
  static byte[] random(int size) {
    byte[] body = of(size, 0);
    ThreadLocalRandom rnd = ThreadLocalRandom.current();
    for (int i = body.length - 3; i >= 0 && body[i] == 'x'; i--) {
      body[i] = (byte) ('a' + rnd.nextInt(26));
    }
    return body;
  }

  /** The send time written by {@link #of}, or 0 when the payload has none. */
  static long sentNanos(byte[] payload) {
    return sentNanos(new String(payload, StandardCharsets.US_ASCII));
  }

  static long sentNanos(String json) {
    int i = json.indexOf("\"t\":");
    if (i < 0) {
      return 0;
    }
    int end = json.indexOf(',', i);
    return Long.parseLong(json.substring(i + 4, end < 0 ? json.indexOf('}', i) : end).trim());
  }
}
