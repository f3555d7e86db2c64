package queen.client;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Predicate;

/**
 * The acks a consumer sends for what its handlers did. One the broker could not take (a restart, a
 * database failover: 5xx or no answer) is sent again, backing off as the pops do, until it is
 * answered or the consumer stops: given up after the transport's few tries, every batch handled
 * during an outage was delivered again at its lease's end. A consumer with {@code idleMillis} ends
 * when an ack has failed that long since it was first sent, as when its pops do; any other waits
 * for its broker, as its pops do (an ack that comes after the lease ended is refused, and says so).
 * While an ack is being sent, its batch's lease is not renewed ({@link BatchRenewal}).
 */
final class ConsumerAcks {
  private static final System.Logger LOG = System.getLogger("queen.client");

  private final Queen queen;

  /** Waits for a backoff; false when the consumer is stopping. */
  private final Predicate<Duration> pause;

  private final long idleMillis;

  ConsumerAcks(Queen queen, Predicate<Duration> pause, long idleMillis) {
    this.queen = queen;
    this.pause = pause;
    this.idleMillis = idleMillis;
  }

  /**
   * The broker's verdicts, in the messages' order; none when the ack was given up. Throws the last
   * failure when a consumer with {@code idleMillis} should end. {@code acking} is set until the ack
   * is answered or given up.
   */
  List<AckResult> send(List<Message> messages, String status, String error, AtomicBoolean acking) {
    acking.set(true);
    try {
      return sendUntilAnswered(messages, status, error);
    } finally {
      acking.set(false);
    }
  }

  private List<AckResult> sendUntilAnswered(List<Message> messages, String status, String error) {
    Duration backoff = Duration.ZERO;
    // from the first send: one try that times out may take the transport's whole retry budget
    long sent = System.nanoTime();
    while (true) {
      try {
        List<AckResult> results = queen.ack(messages, status, error);
        for (AckResult r : results) {
          if (!r.success()) {
            LOG.log(
                System.Logger.Level.INFO,
                "ack of "
                    + r.transactionId()
                    + " refused ("
                    + r.error()
                    + "); it will be redelivered");
          }
        }
        return results;
      } catch (QueenException e) {
        if (!e.retryable()) {
          return givenUp(e);
        }
        long failing = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - sent);
        if (idleMillis > 0 && failing >= idleMillis) {
          throw e; // as a pop failing that long: the consumer ends, await() throwing it
        }
        backoff = Backoff.next(backoff);
        LOG.log(System.Logger.Level.WARNING, "ack failed, retrying in " + backoff + ": " + e);
        if (!pause.test(backoff)) {
          return givenUp(e);
        }
      } catch (IllegalStateException e) {
        // a CancellationException, or the client closed meanwhile (from a handler, say)
        return givenUp(e);
      }
    }
  }

  private static List<AckResult> givenUp(RuntimeException e) {
    LOG.log(
        System.Logger.Level.WARNING,
        "ack failed, the batch will be redelivered when its lease ends: " + e);
    return List.of();
  }
}
