package queen.client;

import java.time.Duration;

/**
 * A request the broker refused (a 4xx, with the broker's error text) or could not serve after the
 * client's retries (a 5xx, a 408 or 429, or no connection, {@code status} 0).
 *
 * <p>A retryable one may come after the broker stored the request: a push retried by hand must send
 * the same transactionIds again, which the broker stores once.
 *
 * <pre>{@code
 * Map<String, Object> item = Map.of("transactionId", order.id(), "data", order);
 * while (true) {
 *   try {
 *     queen.queue("orders").push(item);
 *     break;
 *   } catch (QueenException e) {
 *     if (!e.retryable()) throw e; // the broker refused the request itself
 *     Thread.sleep(1_000); // then the same item, with the same transactionId
 *   }
 * }
 * }</pre>
 */
public final class QueenException extends RuntimeException {
  private final int status;

  /** The broker's {@code Retry-After}, when its answer had one; null otherwise. */
  private final transient Duration retryAfter;

  public QueenException(int status, String message) {
    this(status, message, null);
  }

  QueenException(int status, String message, Duration retryAfter) {
    super(message);
    this.status = status;
    this.retryAfter = retryAfter;
  }

  public QueenException(String message, Throwable cause) {
    super(message, cause);
    this.status = 0;
    this.retryAfter = null;
  }

  Duration retryAfter() {
    return retryAfter;
  }

  /** The HTTP status, or 0 when no answer came. */
  public int status() {
    return status;
  }

  /**
   * True for answers worth retrying: no connection, a timeout, a 5xx, or a proxy's 408 (request
   * timeout) or 429 (too many requests), which say "later" as a 503 does.
   */
  public boolean retryable() {
    return status == 0 || status >= 500 || status == 408 || status == 429;
  }
}
