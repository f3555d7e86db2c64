package queen.client;

import java.security.SecureRandom;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Time-ordered UUIDs (RFC 9562 version 7) for transaction ids the client makes up. Ids from one
 * client increase strictly, so a producer's messages sort in the order it sent them.
 */
final class UuidV7 {
  private static final SecureRandom RANDOM = new SecureRandom();
  private static final AtomicLong LAST = new AtomicLong();

  private UuidV7() {}

  static UUID next() {
    long stamp = LAST.updateAndGet(prev -> Math.max(prev + 1, System.currentTimeMillis() << 12));
    long millis = stamp >>> 12;
    long sequence = stamp & 0xfff;
    long msb = (millis << 16) | 0x7000L | sequence;
    long lsb = (RANDOM.nextLong() & 0x3fffffffffffffffL) | 0x8000000000000000L;
    return new UUID(msb, lsb);
  }
}
