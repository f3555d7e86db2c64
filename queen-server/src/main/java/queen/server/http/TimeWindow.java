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

  /**
   * A list's {@code from} and {@code to}, either absent: a {@code from} after {@code to} is a 400,
   * as on the status routes, not an empty page that looks like no data.
   */
  static void ordered(Instant from, Instant to) {
    if (from != null && to != null && from.isAfter(to)) {
      throw ApiException.badRequest("from must not be after to");
    }
  }

  long minutes() {
    return Math.max(1, Duration.between(from, to).toMinutes());
  }
}
