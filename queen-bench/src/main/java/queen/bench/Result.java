package queen.bench;

import java.util.LinkedHashMap;
import java.util.Map;

/**
 * One measured run: what ran, against what, and the numbers.
 *
 * @param rate messages per second over the measured window
 * @param p50Micros latency percentiles in microseconds (request latency, or end to end where the
 *     scenario says so)
 */
record Result(
    String scenario,
    String target,
    Map<String, Object> params,
    double seconds,
    long messages,
    double rate,
    long requests,
    long p50Micros,
    long p99Micros,
    long p999Micros,
    long errors,
    Map<String, Object> extra) {
  /** A window shorter than this measures start-up and tail effects, not a rate. */
  static final double MIN_WINDOW_SECONDS = 1.0;

  static final String INVALID = "invalid";

  static Result of(
      String scenario,
      String target,
      Map<String, Object> params,
      Recorder r,
      long endNanos,
      Map<String, Object> extra) {
    double s = r.seconds(endNanos);
    Map<String, Object> notes = extra;
    if (s < MIN_WINDOW_SECONDS) {
      notes = new LinkedHashMap<>(extra);
      notes.put(
          INVALID, String.format("measured window %.2f s: the work ran out during warm-up", s));
    }
    return new Result(
        scenario,
        target,
        params,
        s,
        r.messages(),
        s < MIN_WINDOW_SECONDS ? 0 : r.messages() / s,
        r.requests(),
        r.percentile(50),
        r.percentile(99),
        r.percentile(99.9),
        r.errors(),
        notes);
  }

  /** The same result with other notes. */
  Result withExtra(Map<String, Object> notes) {
    return new Result(
        scenario,
        target,
        params,
        seconds,
        messages,
        rate,
        requests,
        p50Micros,
        p99Micros,
        p999Micros,
        errors,
        notes);
  }

  /** Whether the numbers mean anything: false when the measured window was too short. */
  boolean valid() {
    return !extra.containsKey(INVALID);
  }

  /** One line for the terminal. */
  String summary() {
    StringBuilder b = new StringBuilder();
    b.append(String.format("%-16s %-8s %10s msg/s", scenario, target, rateText()));
    b.append(
        String.format("  p50 %s  p99 %s  p99.9 %s", ms(p50Micros), ms(p99Micros), ms(p999Micros)));
    b.append("  ").append(params);
    if (!extra.isEmpty()) {
      b.append("  ").append(extra);
    }
    if (errors > 0) {
      b.append("  errors ").append(errors);
    }
    return b.toString();
  }

  String rateText() {
    return valid() ? String.format("%,.0f", rate) : "n/a";
  }

  static String ms(long micros) {
    return String.format("%.1fms", micros / 1000.0);
  }

  static Map<String, Object> params(Object... kv) {
    Map<String, Object> m = new LinkedHashMap<>();
    for (int i = 0; i < kv.length; i += 2) {
      m.put((String) kv[i], kv[i + 1]);
    }
    return m;
  }
}
