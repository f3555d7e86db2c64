package queen.server.store;

/** Why a partition did or did not deliver in one claim (see {@code queen.log_pop_v1}). */
public enum Verdict {
  /** Messages were claimed. */
  DELIVERED,
  /** Nothing pending for this group. */
  EMPTY,
  /** Leased by another worker or being claimed by a concurrent pop; skipped without waiting. */
  LOCKED,
  /** Held back by windowBuffer or delayedProcessing until a known time. */
  DEFERRED,
  /** The partition does not exist. */
  MISSING;

  static Verdict of(String sql) {
    return valueOf(sql.toUpperCase(java.util.Locale.ROOT));
  }
}
