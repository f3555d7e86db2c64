package queen.server.codec;

/**
 * A payload this broker cannot seal or open: its queue encrypts and no current key is configured,
 * it was sealed with a key this broker does not have, or it does not authenticate. A 503: another
 * broker, or this one with the right keys, can serve it; nothing is lost meanwhile.
 */
public final class PayloadKeyException extends RuntimeException {
  public PayloadKeyException(String message) {
    super(message, null, false, false);
  }
}
