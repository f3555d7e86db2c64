package queen.server.pop;

import java.util.HashSet;
import java.util.Set;

/**
 * When a ring refills from SQL: the first time, then once per interval, and at once when the last
 * reseed filled its page (more may wait beyond it) and the ring has run dry. It also says what the
 * last reseed saw: every candidate, or a random page of them. Not thread-safe: its ring guards it.
 */
final class ReseedSchedule {
  private long lastNanos;
  private boolean primed;
  private boolean attempted;
  private boolean morePending;

  /**
   * The last page was full and made something takeable: the next one may come at once when the ring
   * runs dry. A full page of partitions that gates hold made nothing takeable, and reseeds then ran
   * back to back (over 1,024 partitions under delayedProcessing, say).
   */
  private boolean hurry;

  private boolean running;
  private long endedNanos;

  /**
   * Partitions a claim found empty, while reseeds fill their page; forgotten every {@link
   * #EMPTY_KEPT} reseeds. A push through any broker makes one ready by itself (a hint), so this
   * only bounds what a lost hint costs, and 5,000 pops parked on empty partitions of a wide queue
   * claimed them all once a reseed when it was forgotten at each.
   */
  private final Set<String> foundEmpty = new HashSet<>();

  static final int EMPTY_KEPT = 10;
  private int reseedsSinceForgot;

  /** Whether a reseed has completed: until then the ring cannot answer "nothing here". */
  boolean primed() {
    return primed;
  }

  boolean due(long nowNanos, long intervalNanos, boolean ranDry) {
    return !running && (!attempted || nowNanos - lastNanos >= intervalNanos || (hurry && ranDry));
  }

  /**
   * True when the caller should reseed now; it must then call {@link #ended} or {@link #failed}.
   */
  boolean start(long nowNanos, long intervalNanos, boolean ranDry) {
    if (!due(nowNanos, intervalNanos, ranDry)) {
      return false;
    }
    running = true;
    attempted = true;
    return true;
  }

  /**
   * A reseed ended; {@code fullPage} means more may wait, {@code madeTakeable} that it released a
   * partition for the pops.
   */
  void ended(boolean fullPage, boolean madeTakeable, long nowNanos) {
    running = false;
    primed = true;
    morePending = fullPage;
    hurry = fullPage && madeTakeable;
    lastNanos = nowNanos;
    endedNanos = nowNanos;
    if (!fullPage || ++reseedsSinceForgot >= EMPTY_KEPT) {
      foundEmpty.clear();
      reseedsSinceForgot = 0;
    }
  }

  /**
   * Whether the ring may say "nothing here" of a partition it does not hold ready: the last reseed
   * read every candidate, or a claim found this one empty since. A reseed that filled its page read
   * a random sample, which leaves most partitions of a wide queue out.
   */
  boolean covers(String partition) {
    return !morePending || foundEmpty.contains(partition);
  }

  /** Whether the last reseed ended after {@code nanos} (System.nanoTime). */
  boolean endedAfter(long nanos) {
    return primed && endedNanos - nanos > 0;
  }

  /** A claim found the partition empty; remembered for up to {@link #EMPTY_KEPT} reseeds. */
  void empty(String partition) {
    if (morePending) {
      foundEmpty.add(partition);
    }
  }

  /** A reseed that failed (database down): retried after the interval, not by every pop. */
  void failed(long nowNanos) {
    running = false;
    lastNanos = nowNanos;
  }
}
