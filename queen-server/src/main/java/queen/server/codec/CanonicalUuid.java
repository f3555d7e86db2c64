package queen.server.codec;

import java.util.UUID;

/**
 * Recognises a UUID written the way {@link UUID#toString()} writes it (36 characters, lower-case
 * hex, hyphens at 8, 13, 18 and 23), the form every Queen client gives its transaction ids. Such a
 * string round-trips exactly through 16 bytes; any other string, upper-case hex included, is not
 * one, so that a decoded transaction id is always the one pushed, character for character.
 */
final class CanonicalUuid {
  private CanonicalUuid() {}

  /** The UUID the string spells in canonical form, or null. */
  static UUID parse(String s) {
    if (s.length() != 36) {
      return null;
    }
    long msb = 0;
    long lsb = 0;
    int digits = 0;
    for (int i = 0; i < 36; i++) {
      char ch = s.charAt(i);
      if (i == 8 || i == 13 || i == 18 || i == 23) {
        if (ch != '-') {
          return null;
        }
        continue;
      }
      int v;
      if (ch >= '0' && ch <= '9') {
        v = ch - '0';
      } else if (ch >= 'a' && ch <= 'f') {
        v = ch - 'a' + 10;
      } else {
        return null;
      }
      if (digits < 16) {
        msb = (msb << 4) | v;
      } else {
        lsb = (lsb << 4) | v;
      }
      digits++;
    }
    return new UUID(msb, lsb);
  }
}
