package queen.server.http;

import java.util.Set;
import java.util.TreeSet;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import queen.server.codec.Frame;
import queen.server.codec.PayloadCipher;
import queen.server.codec.PayloadKeyException;

/**
 * Payloads as the clients see them: a payload sealed at rest is opened here, just before it is
 * rendered, so encryption is transparent on the wire (pop, dead letters, message detail, traces).
 */
public final class Payloads {
  private static final Logger log = LoggerFactory.getLogger(Payloads.class);

  private final PayloadCipher cipher;

  /** The registered keys this broker cannot open with, as the state refresh last read them. */
  private volatile Set<Integer> lacking = Set.of();

  /** {@code cipher} null: no key configured; a sealed payload is then a 503. */
  public Payloads(PayloadCipher cipher) {
    this.cipher = cipher;
  }

  /**
   * The ids of every key that has sealed payloads (queen.payload_keys). One this broker lacks was
   * registered by a broker that started sealing with a new key before this one was given it: see
   * {@link #checkOpens}.
   */
  public void registeredKeys(Set<Integer> keys) {
    Set<Integer> missing = lacking(cipher, keys);
    if (!missing.isEmpty() && !missing.equals(lacking)) {
      log.error(
          "another broker seals payloads with keys {}, which this broker lacks: pops answer 503"
              + " until it is restarted with that key in QUEEN_ENCRYPTION_KEYS_OLD",
          describe(missing));
    }
    lacking = Set.copyOf(missing);
  }

  /**
   * Refuses, before each claim, every pop while a key that sealed payloads is lacking here: an
   * autoAck pop would move the cursor past messages it then cannot answer, and a leased one would
   * hold their partition for a lease time. Whatever the queue: one that does not encrypt now may
   * hold payloads sealed before (a Queen client's create() sends encryptionEnabled false), and the
   * start refuses a broker lacking a registered key altogether for the same reason.
   */
  public void checkOpens() {
    Set<Integer> missing = lacking;
    if (!missing.isEmpty()) {
      throw new PayloadKeyException(
          "payloads are sealed with keys " + describe(missing) + ", which this broker lacks");
    }
  }

  /** The ids among {@code keys} that {@code cipher} (null: none configured) cannot open with. */
  public static Set<Integer> lacking(PayloadCipher cipher, Set<Integer> keys) {
    Set<Integer> missing = new TreeSet<>();
    for (int id : keys) {
      if (cipher == null || !cipher.opens(id)) {
        missing.add(id);
      }
    }
    return missing;
  }

  private static String describe(Set<Integer> ids) {
    return ids.stream().map(PayloadCipher::describe).toList().toString();
  }

  /** A payload of a listing: opened, or null with why it could not be ({@code error}). */
  record Listed(byte[] plain, String error) {}

  /**
   * A payload for a page of many (dead letters, traces): one that cannot be opened (its key gone,
   * its bytes damaged) is named in its entry, and must not fail the page, which hid the others and
   * the one to be dealt with.
   */
  Listed listed(int flags, byte[] payload) {
    try {
      return new Listed(plain(flags, payload), null);
    } catch (PayloadKeyException e) {
      return new Listed(null, e.getMessage());
    }
  }

  byte[] plain(Frame f) {
    return plain(f.flags(), f.payload());
  }

  byte[] plain(int flags, byte[] payload) {
    if ((flags & Frame.FLAG_ENCRYPTED) == 0) {
      return payload;
    }
    if (cipher == null) {
      throw new PayloadKeyException(
          "a payload is encrypted and this broker has no QUEEN_ENCRYPTION_KEY");
    }
    return cipher.open(payload);
  }
}
