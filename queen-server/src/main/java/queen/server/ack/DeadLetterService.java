package queen.server.ack;

import java.time.InstantSource;
import java.util.Optional;
import java.util.UUID;
import queen.server.codec.UuidV7;
import queen.server.push.PushListener;
import queen.server.store.DeadLetterStore;

/** Dead letters for operators: list them, and requeue one into its partition to recover it. */
public final class DeadLetterService {
  private final DeadLetterStore store;
  private final UuidV7 ids;
  private final PushListener listener;
  private final long pageMaxBytes;

  /**
   * @param pageMaxBytes QUEEN_POP_MAX_BYTES: a page ends with the letter whose payload crosses it
   */
  public DeadLetterService(
      DeadLetterStore store, InstantSource clock, PushListener listener, long pageMaxBytes) {
    this.store = store;
    this.ids = new UuidV7(clock);
    this.listener = listener;
    this.pageMaxBytes = pageMaxBytes;
  }

  /** Up to {@code limit} letters, fewer where their payloads pass the page's byte budget. */
  public DeadLetterStore.Page list(DeadLetterStore.Filter filter, int limit, int offset) {
    return store.list(filter, limit, offset, pageMaxBytes);
  }

  /** Appends the message to its partition again; what was appended, or empty if none is dead. */
  public Optional<DeadLetterStore.Requeued> requeue(UUID partitionId, String transactionId) {
    Optional<DeadLetterStore.Requeued> r = store.requeue(partitionId, transactionId, ids.next());
    r.ifPresent(q -> listener.stored(q.queue(), q.partition(), 1, q.payloadBytes()));
    return r;
  }
}
