package queen.server.http;

import queen.server.codec.Frame;
import queen.server.codec.PayloadCipher;
import queen.server.codec.PayloadKeyException;

/**
 * Payloads as the clients see them: a payload sealed at rest is opened here, just before it is
 * rendered, so encryption is transparent on the wire (pop, dead letters, message detail, traces).
 */
public final class Payloads {
  private final PayloadCipher cipher;

  /** {@code cipher} null: no key configured; a sealed payload is then a 503. */
  public Payloads(PayloadCipher cipher) {
    this.cipher = cipher;
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
