package queen.server.store;

import java.sql.SQLException;
import java.sql.SQLTransientConnectionException;
import java.util.Set;

/**
 * A database failure, classified for the HTTP layer: {@link #unavailable()} failures (no
 * connection, PostgreSQL down or restarting) are answered 503 with a retry hint; anything else is
 * our bug and answered 500. The PostgreSQL message is kept for the log, never sent to clients.
 */
public final class StoreException extends RuntimeException {
  private final boolean unavailable;

  private StoreException(String message, Throwable cause, boolean unavailable) {
    super(message, cause);
    this.unavailable = unavailable;
  }

  static StoreException from(SQLException e) {
    return new StoreException(e.getMessage(), e, isUnavailable(e));
  }

  public boolean unavailable() {
    return unavailable;
  }

  /**
   * The database cannot be reached at all (no connection, shutting down, pool timeout), as opposed
   * to the transient contention that {@link #unavailable()} also covers.
   */
  public boolean outage() {
    if (getCause() instanceof SQLTransientConnectionException) {
      return true;
    }
    String state = sqlState();
    return state != null && (state.startsWith("08") || state.startsWith("57P"));
  }

  /**
   * Concurrent work conflicted on the same data: a deadlock (40P01), a serialization failure
   * (40001), a lock not available (55P03), or a row naming one removed meanwhile (23503). Not an
   * outage: the database answered, and a retry resolves it; one that repeats is worth a look.
   */
  public boolean conflict() {
    String state = sqlState();
    return state != null && CONFLICTS.contains(state);
  }

  /**
   * PostgreSQL cancelled the statement (SQLSTATE 57014): it ran past the pool's statement timeout
   * (QUEEN_ADMIN_STATEMENT_TIMEOUT_MS), or an operator cancelled it.
   */
  public boolean cancelled() {
    return "57014".equals(sqlState());
  }

  /**
   * PostgreSQL refused the data itself: a data exception (SQLSTATE class 22), an integrity
   * violation (23), or one of the broker's own errors (class QN). Its retry fails alike, where any
   * other failure may pass once the server is writable, has room or has been upgraded.
   */
  public boolean refusedData() {
    String state = sqlState();
    return state != null
        && !FOREIGN_KEY_VIOLATION.equals(state)
        && (state.startsWith("22") || state.startsWith("23") || state.startsWith("QN"));
  }

  /**
   * A row naming one that was deleted meanwhile: a cursor for a partition removed as inactive
   * (PARTITION_CLEANUP_DAYS) after the pop, seed or seek read it, or a group's subscription for a
   * queue deleted after it was read. The broker writes such references only to rows it just read,
   * so this is a race that a retry resolves, as it resolves a deadlock.
   */
  private static final String FOREIGN_KEY_VIOLATION = "23503";

  private static final Set<String> CONFLICTS =
      Set.of(FOREIGN_KEY_VIOLATION, "40P01", "40001", "55P03");

  /** The SQLSTATE of the failure, or null. */
  String sqlState() {
    return getCause() instanceof SQLException e ? e.getSQLState() : null;
  }

  /**
   * Failures worth a retry: connection failures (SQLSTATE class 08), shutdowns (57P), pool
   * timeouts, a server that takes no writes now (25006: a primary demoted in a failover, a standby)
   * or lacks resources (class 53: disk full, out of memory, too many connections), a reference to a
   * partition removed meanwhile (23503), and the transient outcomes of contention (deadlock 40P01,
   * serialization 40001, lock not available 55P03) that the client's retry resolves.
   */
  private static boolean isUnavailable(SQLException e) {
    if (e instanceof SQLTransientConnectionException) {
      return true;
    }
    String state = e.getSQLState();
    return state != null
        && (state.startsWith("08")
            || state.startsWith("57P")
            || state.startsWith("53")
            || state.equals("25006")
            || CONFLICTS.contains(state));
  }
}
