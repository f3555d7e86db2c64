package queen.server.push;

import java.util.Set;
import java.util.function.IntConsumer;
import queen.server.codec.Frame;
import queen.server.codec.PayloadCipher;
import queen.server.codec.PayloadKeyException;

/**
 * Which pushed payloads are sealed: those of the queues configured with {@code encryptionEnabled},
 * as this broker last read them (at start, after a configure through it, and every
 * QUEEN_STATE_REFRESH_MS). A frame records in its flag whether it was sealed, so a queue switched
 * on or off changes only later pushes and every frame is read the way it was written. The key that
 * seals is registered in queen.payload_keys before anything it sealed is stored, and not before it
 * seals (see {@link #beforeStoring}).
 */
public final class PayloadSealing {
  private final PayloadCipher cipher;
  private final IntConsumer register;
  private volatile Set<String> encryptedQueues = Set.of();

  /** Whether queen.payload_keys holds the current key, as this broker last wrote or read it. */
  private volatile boolean registered;

  /**
   * @param cipher null: no key configured, no queue can encrypt
   * @param register records a key id in queen.payload_keys (idempotent), before anything it sealed
   *     is stored
   */
  public PayloadSealing(PayloadCipher cipher, IntConsumer register) {
    this.cipher = cipher;
    this.register = register;
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

  /**
   * Registers the current key before the first batch it sealed reaches the database: the brokers
   * lacking a registered key refuse every pop, so a key is registered only once it has sealed
   * something (a broker started with a mistyped key, or the first broker of a rollout given one,
   * must not stop the others' pops). Decided by the batch's frames, as sealed: a queue switched to
   * encrypt between a check of the items and their sealing stored a key never registered.
   */
  void beforeStoring(PushBatch batch) {
    if (!registered && cipher != null && batch.sealsAny()) {
      register.accept(cipher.currentKeyId());
      registered = true;
    }
  }

  /**
   * The registered key ids, as the state refresh read them: a current key not among them (its row
   * deleted by hand) is registered again before its next seal.
   */
  public void registeredKeys(Set<Integer> keys) {
    registered = cipher != null && cipher.canSeal() && keys.contains(cipher.currentKeyId());
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
