package queen.server.push;

import java.util.Set;
import queen.server.codec.Frame;
import queen.server.codec.PayloadCipher;
import queen.server.codec.PayloadKeyException;

/**
 * Which pushed payloads are sealed: those of the queues configured with {@code encryptionEnabled},
 * as this broker last read them (at start, after a configure through it, and every
 * QUEEN_STATE_REFRESH_MS). A frame records in its flag whether it was sealed, so a queue switched
 * on or off changes only later pushes and every frame is read the way it was written.
 */
public final class PayloadSealing {
  private final PayloadCipher cipher;
  private volatile Set<String> encryptedQueues = Set.of();

  /** {@code cipher} null: no key configured, no queue can encrypt. */
  public PayloadSealing(PayloadCipher cipher) {
    this.cipher = cipher;
  }

  public void encryptedQueues(Set<String> queues) {
    encryptedQueues = Set.copyOf(queues);
  }

  /** The frame of one pushed item, its payload sealed when its queue encrypts. */
  Frame frame(String transactionId, PushItem item) {
    if (seals(item.queue())) {
      return new Frame(
          transactionId,
          item.traceId(),
          item.producerSub(),
          Frame.FLAG_ENCRYPTED,
          cipher.seal(item.payload()));
    }
    return new Frame(transactionId, item.traceId(), item.producerSub(), 0, item.payload());
  }

  /**
   * The payload as the local buffer keeps it: sealed when its queue encrypts, so that a buffered
   * push holds no more plaintext on the broker's disk than the database would; null when the queue
   * does not encrypt (kept as sent).
   */
  byte[] sealedForBuffer(PushItem item) {
    return seals(item.queue()) ? cipher.seal(item.payload()) : null;
  }

  /** A payload the buffer kept sealed, opened for the drain (which seals it for the database). */
  byte[] openFromBuffer(byte[] sealed) {
    if (cipher == null) {
      throw new PayloadKeyException(
          "a buffered payload is sealed but this broker has no QUEEN_ENCRYPTION_KEY");
    }
    return cipher.open(sealed);
  }

  /** Whether {@code queue} encrypts its payloads (null: whether any queue does). */
  public boolean encrypts(String queue) {
    return queue == null ? !encryptedQueues.isEmpty() : encryptedQueues.contains(queue);
  }

  private boolean seals(String queue) {
    if (!encryptedQueues.contains(queue)) {
      return false;
    }
    if (cipher == null || !cipher.canSeal()) {
      // never store in the clear what the queue promises to encrypt
      throw new PayloadKeyException(
          "queue " + queue + " encrypts its payloads but this broker has no QUEEN_ENCRYPTION_KEY");
    }
    return true;
  }
}
