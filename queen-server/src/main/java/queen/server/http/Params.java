package queen.server.http;

import java.time.Instant;
import java.util.Objects;

/**
 * Query and path parameters. Values arrive URL-decoded. Unlike old Queen, which replaced what it
 * could not parse by the default, a parameter that is present but unparsable is a 400 naming it: a
 * {@code timeout=abc} silently read as the default hides the caller's bug.
 */
final class Params {
  private final Request req;

  Params(Request req) {
    this.req = req;
  }

  String string(String name, String fallback) {
    return Fields.text(Objects.requireNonNullElse(req.query(name), fallback), name);
  }

  /** A parameter that filters when present: null when absent or blank. */
  String optional(String name) {
    String v = string(name, "");
    return v.isBlank() ? null : v;
  }

  /**
   * A name that chooses what a request consumes or removes (a pop's consumer group, the partition a
   * clear empties): null when absent or empty, else a {@link Fields#name}. Blank is refused, not
   * taken as absent: {@code consumerGroup=%20} popped and auto-acked queue mode's messages, and
   * {@code partition=%20} cleared the whole queue.
   */
  String optionalName(String name) {
    String v = string(name, "");
    return v.isEmpty() ? null : Fields.name(v, name);
  }

  /** A timestamp parameter (see {@link Fields#timestamp}): null when absent or blank. */
  Instant timestamp(String name) {
    String v = optional(name);
    return v == null ? null : Fields.timestamp(name, v);
  }

  /** {@code true}/{@code 1} or {@code false}/{@code 0} (any case); absent or empty: the default. */
  boolean bool(String name, boolean fallback) {
    String v = Objects.requireNonNullElse(req.query(name), "").trim();
    if (v.isEmpty()) {
      return fallback;
    }
    if (v.equalsIgnoreCase("true") || v.equals("1")) {
      return true;
    }
    if (v.equalsIgnoreCase("false") || v.equals("0")) {
      return false;
    }
    throw ApiException.badRequest(name + " must be true or false");
  }

  /** A whole number; absent or empty: the default. */
  int integer(String name, int fallback) {
    String v = Objects.requireNonNullElse(req.query(name), "").trim();
    if (v.isEmpty()) {
      return fallback;
    }
    try {
      return Integer.parseInt(v);
    } catch (NumberFormatException e) {
      throw ApiException.badRequest(name + " must be an integer");
    }
  }

  /** A page size: {@code limit}, default {@code fallback}, held between 1 and {@code max}. */
  int limit(int fallback, int max) {
    return Math.min(Math.max(integer("limit", fallback), 1), max);
  }

  /** Where a page starts: {@code offset}, default 0, not below 0. */
  int offset() {
    return offset(Integer.MAX_VALUE);
  }

  /**
   * Where a page starts: {@code offset}, default 0, at least 0; above {@code max} a 400 (held at
   * the bound, a client paging to an empty page got the same page forever).
   */
  int offset(int max) {
    int offset = Math.max(integer("offset", 0), 0);
    if (offset > max) {
      throw ApiException.badRequest(
          "offset must be at most " + max + ": narrow the time range or filter");
    }
    return offset;
  }

  /** A path parameter that names a queue, partition or consumer group (see {@link Fields#name}). */
  String name(String param) {
    return Fields.name(path(param), param);
  }

  /** A path parameter, percent-decoded once. */
  String path(String name) {
    return Fields.text(req.pathParam(name), name);
  }
}
