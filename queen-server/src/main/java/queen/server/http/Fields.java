package queen.server.http;

import com.fasterxml.jackson.databind.JsonNode;
import java.time.Instant;
import java.time.LocalDate;
import java.time.LocalDateTime;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.time.format.DateTimeParseException;
import java.time.temporal.TemporalAccessor;
import java.util.Locale;
import java.util.UUID;
import java.util.regex.Pattern;

/** Typed reads of request fields, each failure a 400 that names the field. */
final class Fields {
  private static final Pattern UUID_TEXT =
      Pattern.compile(
          "[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}");

  private Fields() {}

  /** A string field that may be absent or null (then {@code fallback}), but not another type. */
  static String optionalString(JsonNode obj, String field, String fallback) {
    return optionalString(obj, field, fallback, "");
  }

  /** As above, {@code at} saying where in the body the field is (" (operations[2])"). */
  static String optionalString(JsonNode obj, String field, String fallback, String at) {
    JsonNode v = obj.get(field);
    if (v == null || v.isNull()) {
      return fallback;
    }
    if (!v.isTextual()) {
      throw ApiException.badRequest(field + " must be a string" + at);
    }
    return text(v.asText(), field + at);
  }

  /**
   * A name or id headed for a PostgreSQL text column: it cannot hold a NUL character, so one is a
   * client mistake (400), not a database error.
   */
  static String text(String value, String field) {
    if (value.indexOf('\0') >= 0) {
      throw ApiException.badRequest(field + " must not contain NUL characters");
    }
    return value;
  }

  /**
   * Text the broker looks up again by its value, a name or a transactionId: besides {@link #text},
   * no lone surrogate (a JSON escape like \ud800 unpaired), which PostgreSQL stores as '?', so that
   * the value read back is another (a push to such a queue answered 500, a retried transactionId
   * was stored twice). Free text, an ack's error say, keeps it as '?'.
   */
  static String identifier(String value, String field) {
    text(value, field);
    for (int i = 0; i < value.length(); i++) {
      char c = value.charAt(i);
      if (Character.isSurrogate(c)) {
        if (Character.isHighSurrogate(c)
            && i + 1 < value.length()
            && Character.isLowSurrogate(value.charAt(i + 1))) {
          i++;
        } else {
          throw ApiException.badRequest(field + " must not contain unpaired surrogates");
        }
      }
    }
    return value;
  }

  /**
   * The longest transactionId a push takes: an entry of the dead letters' (partition,
   * transactionId) index holds at most 2,704 bytes, and 512 characters are at most 1,536 UTF-8
   * bytes, which leaves room for the suffix of requeues (46 characters each). Longer, a push was
   * stored and its dead-lettering failed for ever (a 500, and every maxWait sweep). Acks only look
   * an id up: they take any, as messages stored before this limit carry them.
   */
  static final int MAX_TRANSACTION_ID = 512;

  /**
   * A pushed transactionId: an {@link #identifier} of at most {@link #MAX_TRANSACTION_ID}
   * characters.
   */
  static String transactionId(String value, String field) {
    // in UTF-16 units, so at most 1,536 bytes of UTF-8: within a dead letters' index entry
    if (value != null && value.length() > MAX_TRANSACTION_ID) {
      throw ApiException.badRequest(
          field + " must be at most " + MAX_TRANSACTION_ID + " characters, got " + value.length());
    }
    return identifier(notDotSegment(value, field), field);
  }

  /**
   * At most {@code max} characters, counted as code points: by UTF-16 units, 255 emoji were 510 and
   * refused.
   */
  private static void atMost(String value, int max, String field) {
    int length = value.codePointCount(0, value.length());
    if (length > max) {
      throw ApiException.badRequest(
          field + " must be at most " + max + " characters, got " + length);
    }
  }

  /** The longest queue, partition or consumer-group name accepted. */
  static final int MAX_NAME = 255;

  /**
   * A queue's namespace or task (may be empty): at most 255 characters, as a name, and an {@link
   * #identifier}. Longer, one failed the btree entry's size limit of the index that finds queues by
   * them: a 500; with a lone surrogate, stored as '?', no discovery pop could name it.
   */
  static String label(String value, String field) {
    atMost(value, MAX_NAME, field);
    return identifier(value, field);
  }

  /**
   * A queue, partition or consumer-group name: the same rule on every route (push, configure, pops,
   * admin, transactions), so that no route creates a name another refuses. Not empty, not only
   * whitespace, at most 255 characters, no control characters nor unpaired surrogates, not {@code
   * .} or {@code ..}.
   */
  static String name(String value, String field) {
    if (value == null || value.isBlank()) {
      throw ApiException.badRequest(field + " must not be empty");
    }
    atMost(value, MAX_NAME, field);
    for (int i = 0; i < value.length(); i++) {
      if (Character.isISOControl(value.charAt(i))) {
        throw ApiException.badRequest(field + " must not contain control characters");
      }
    }
    // a dot segment in a URL is resolved away: DELETE .../queues/.. reached the route above it
    return identifier(notDotSegment(value, field), field);
  }

  /**
   * A value a path names (a name, a transactionId, a trace name) that is not '.' or '..': a URL
   * resolves such a segment away, so no route could reach it (a message pushed with ".." could be
   * neither looked at nor requeued).
   */
  static String notDotSegment(String value, String field) {
    if (".".equals(value) || "..".equals(value)) {
      throw ApiException.badRequest(field + " must not be '.' or '..'");
    }
    return value;
  }

  /**
   * A queue's name where a queue is made (push, configure, a stream's queues): a {@link #name}
   * without the characters that change a URL path. Queen's clients put a queue's name in a path as
   * it is: "tenant/orders" reached no route, "orders;v2" and "orders?v2" popped the queue "orders"
   * (a path parameter, a query), "orders#2" the same, "50%41" the queue "50A", and "a\b" reached no
   * route (Node's URL parser makes it "a/b"). Partitions, groups and transaction ids may hold them:
   * our clients and the dashboard encode them, and the query string and the bodies reach them.
   */
  static String queueName(String value, String field) {
    // named first: its length is bound before the name goes into the error below
    String named = name(value, field);
    for (char c : URL_CHANGERS) {
      if (named.indexOf(c) >= 0) {
        throw ApiException.badRequest(
            field + " must not contain any of " + URL_CHANGERS_TEXT + ", got '" + named + "'");
      }
    }
    return named;
  }

  private static final char[] URL_CHANGERS = {'/', '\\', ';', '?', '#', '%'};
  private static final String URL_CHANGERS_TEXT = "/ \\ ; ? # %";

  /** True when text is a canonical 8-4-4-4-12 hex UUID. */
  static boolean isUuid(String text) {
    return UUID_TEXT.matcher(text).matches();
  }

  static UUID uuid(String text, String field) {
    if (!isUuid(text)) {
      throw ApiException.badRequest(field + " must be a UUID");
    }
    return UUID.fromString(text);
  }

  /**
   * ISO-8601 with or without an offset (none means UTC), or a bare date; or a JavaScript Date's
   * text, which Queen's JS client sends for a Date given as a dead-letter filter ({@code Sat May 16
   * 2026 08:42:27 GMT+0200 (Central European Summer Time)}, or {@code toUTCString()}'s RFC 1123
   * form): refused, the client's listing answered no dead letters at all. Anything else is a 400.
   */
  static Instant timestamp(String param, String text) {
    try {
      Instant instant = instant(text.trim());
      int year = instant.atOffset(ZoneOffset.UTC).getYear();
      if (year < 1 || year > 9999) {
        throw new DateTimeParseException("year out of range", text, 0);
      }
      return instant;
    } catch (java.time.DateTimeException e) {
      // a parse error, or an instant beyond what a year can hold (+999999999-12-31T23:59:59-18:00)
      throw ApiException.badRequest(
          param
              + " must be an ISO-8601 timestamp"
              + (param.equals("subscriptionFrom") ? " or 'now'" : "")
              + ", got '"
              + text
              + "'");
    }
  }

  private static Instant instant(String text) {
    if (!text.isEmpty() && Character.isLetter(text.charAt(0))) {
      String bare = JS_ZONE_NAME.matcher(text).replaceFirst("");
      DateTimeFormatter form =
          bare.indexOf(',') >= 0 ? DateTimeFormatter.RFC_1123_DATE_TIME : JS_DATE;
      return form.parse(bare, OffsetDateTime::from).toInstant();
    }
    String t = text.replace(' ', 'T');
    if (t.length() == 10) {
      return LocalDate.parse(t).atStartOfDay(ZoneOffset.UTC).toInstant();
    }
    TemporalAccessor parsed =
        DateTimeFormatter.ISO_DATE_TIME.parseBest(t, OffsetDateTime::from, LocalDateTime::from);
    return parsed instanceof OffsetDateTime odt
        ? odt.toInstant()
        : ((LocalDateTime) parsed).toInstant(ZoneOffset.UTC);
  }

  private static final DateTimeFormatter JS_DATE =
      DateTimeFormatter.ofPattern("EEE MMM dd yyyy HH:mm:ss 'GMT'xx", Locale.ENGLISH);
  private static final Pattern JS_ZONE_NAME = Pattern.compile(" \\([^)]*\\)$");

  /**
   * Rejects what jsonb cannot hold: NUL characters and lone surrogates, in texts or names, numbers
   * beyond PostgreSQL's numeric (131,072 digits before the point, 16,383 after), and numbers of
   * more than {@value #MAX_WRITTEN_DIGITS} digits written out in all. jsonb writes a number out in
   * full: {@code 1e131071} is 8 bytes in a request and 131,072 digits at every read, and a trace of
   * a few thousand such made PostgreSQL run out of memory on each read of its message. The bound is
   * per value: a page of 1,000 traces reads 10 MB of digits at most, but a message's traces are
   * read whole, each up to 10 KB of digits.
   */
  static void storableJson(JsonNode v, String at) {
    if (writtenDigits(v, at) > MAX_WRITTEN_DIGITS) {
      throw ApiException.badRequest(
          at
              + " holds numbers of more than "
              + MAX_WRITTEN_DIGITS
              + " digits written out in all (1e1000 is 1,001 digits)");
    }
  }

  static final int MAX_WRITTEN_DIGITS = 10_000;

  /** Checks {@code v} as {@link #storableJson} does, answering its numbers' digits written out. */
  private static long writtenDigits(JsonNode v, String at) {
    if (v.isTextual()) {
      storableText(v.asText(), at);
    } else if (v.isNumber()) {
      java.math.BigDecimal d = v.decimalValue();
      // in long: 1e2147483647 has 1 - -2147483647 digits before the point, which wrapped in int
      long whole = (long) d.precision() - d.scale();
      if (whole > 131_072 || d.scale() > 16_383) {
        throw ApiException.badRequest(at + " holds a number beyond what PostgreSQL can store");
      }
      return Math.max(whole, 1) + Math.max(d.scale(), 0);
    } else if (v.isContainerNode()) {
      long digits = 0;
      for (var e : v.properties()) {
        storableText(e.getKey(), at);
        digits += writtenDigits(e.getValue(), at);
      }
      if (v.isArray()) {
        for (JsonNode item : v) {
          digits += writtenDigits(item, at);
        }
      }
      return digits;
    }
    return 0;
  }

  static void storableText(String s, String at) {
    for (int i = 0; i < s.length(); i++) {
      char ch = s.charAt(i);
      boolean paired =
          Character.isHighSurrogate(ch)
              ? i + 1 < s.length() && Character.isLowSurrogate(s.charAt(++i))
              : !Character.isLowSurrogate(ch);
      if (ch == 0 || !paired) {
        throw ApiException.badRequest(
            at + " must not contain NUL characters or unpaired surrogates");
      }
    }
  }
}
