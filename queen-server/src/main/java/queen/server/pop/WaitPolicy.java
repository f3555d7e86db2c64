package queen.server.pop;

/**
 * How long a long-poll parks between attempts when nothing wakes it: {@code initialMs} for the
 * first {@code threshold} attempts, then {@code initialMs x attempt x multiplier} capped at {@code
 * maxMs}. The bound is the correctness floor of pops of one partition, of discovery pops and of
 * every pop without the hot-list: a lost wake costs at most one interval. Whole-queue pops on the
 * hot-list park until a wake or their deadline; the rings' watch, twice per {@code maxMs}, is their
 * floor. A wake that finds the gate opened resets the count.
 *
 * @param initialMs POP_WAIT_INITIAL_INTERVAL_MS (100)
 * @param threshold POP_WAIT_BACKOFF_THRESHOLD (3)
 * @param multiplier POP_WAIT_BACKOFF_MULTIPLIER (2.0)
 * @param maxMs POP_WAIT_MAX_INTERVAL_MS (1000)
 */
public record WaitPolicy(long initialMs, int threshold, double multiplier, long maxMs) {
  public static final WaitPolicy DEFAULT = new WaitPolicy(100, 3, 2.0, 1000);

  public WaitPolicy {
    if (initialMs < 1 || threshold < 0 || multiplier < 1 || maxMs < initialMs) {
      throw new IllegalArgumentException("bad wait policy " + this);
    }
  }

  /** The park bound of the n-th consecutive empty attempt, n from 1. */
  public long intervalMs(int attempt) {
    if (attempt <= threshold) {
      return initialMs;
    }
    return (long) Math.min(initialMs * (double) attempt * multiplier, maxMs);
  }
}
