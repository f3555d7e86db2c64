package queen.client;

import java.time.Duration;

/** A consumer's wait between failed calls to the broker: 1 s, doubled after each, at most 10 s. */
final class Backoff {
  private static final Duration FIRST = Duration.ofSeconds(1);
  private static final Duration MAX = Duration.ofSeconds(10);

  private Backoff() {}

  /** The wait after {@code current} (zero: after the first failure). */
  static Duration next(Duration current) {
    if (current.isZero()) {
      return FIRST;
    }
    Duration d = current.multipliedBy(2);
    return d.compareTo(MAX) > 0 ? MAX : d;
  }
}
