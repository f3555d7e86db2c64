package queen.server.ack;

import java.time.Instant;
import java.time.InstantSource;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import queen.server.codec.UuidV7;
import queen.server.push.PushListener;
import queen.server.store.DeadLetterStore;

/** Dead letters for operators: list them, and requeue one into its partition to recover it. */
public final class DeadLetterService {
  private final DeadLetterStore store;
  private final InstantSource clock;
  private final UuidV7 ids;
  private final PushListener listener;

  public DeadLetterService(DeadLetterStore store, InstantSource clock, PushListener listener) {
    this.store = store;
    this.clock = clock;
    this.ids = new UuidV7(clock);
    this.listener = listener;
  }

  public DeadLetterStore.Page list(DeadLetterStore.Filter filter, int limit, int offset) {
    return store.list(filter, limit, offset);
  }

  /** Appends the message to its partition again; what was appended, or empty if none is dead. */
  public Optional<DeadLetterStore.Requeued> requeue(UUID partitionId, String transactionId) {
    Instant now = clock.instant();
    long micros = TimeUnit.SECONDS.toMicros(now.getEpochSecond()) + now.getNano() / 1_000;
    Optional<DeadLetterStore.Requeued> r =
        store.requeue(partitionId, transactionId, ids.next(), micros);
    r.ifPresent(q -> listener.stored(q.queue(), q.partition(), 1));
    return r;
  }
}
