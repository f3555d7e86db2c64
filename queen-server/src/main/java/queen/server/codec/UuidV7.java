package queen.server.codec;

import java.time.InstantSource;
import java.util.UUID;
import java.util.concurrent.ThreadLocalRandom;

/**
 * RFC 9562 version 7 UUIDs: 48 bits of Unix milliseconds, then random bits.
 *
 * <p>Message ids and lease ids are v7 so that they sort by creation time, which is what Queen's
 * clients and streams assume when they order by id.
 */
public final class UuidV7 {
  private final InstantSource clock;

  public UuidV7(InstantSource clock) {
    this.clock = clock;
  }

  public UUID next() {
    ThreadLocalRandom random = ThreadLocalRandom.current();
    long millis = clock.millis();
    long msb = (millis << 16) | 0x7000L | (random.nextLong() & 0x0FFFL);
    long lsb = (random.nextLong() & 0x3FFF_FFFF_FFFF_FFFFL) | 0x8000_0000_0000_0000L;
    return new UUID(msb, lsb);
  }
}
