package queen.server.http;

import java.time.Duration;
import java.time.Instant;

/** The {@code from} and {@code to} of a status or analytics request. */
record TimeWindow(Instant from, Instant to) {
  /** Defaults: {@code to} now, {@code from} the {@code fallback} before it. */
  static TimeWindow of(Params p, Instant now, Duration fallback) {
    Instant from = p.timestamp("from");
    Instant to = p.timestamp("to");
    to = to == null ? now : to;
    from = from == null ? to.minus(fallback) : from;
    if (!from.isBefore(to)) {
      throw ApiException.badRequest("from must be before to");
    }
    return new TimeWindow(from, to);
  }

  long minutes() {
    return Math.max(1, Duration.between(from, to).toMinutes());
  }
}
