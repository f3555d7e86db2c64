package queen.server.store;

import java.sql.Connection;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * Applies a transaction's pushes and acks in one PostgreSQL transaction, all or nothing. Pushes go
 * first, then acks group by group: every transaction takes its locks in the same order.
 */
public final class TransactionStore {
  private final Database db;

  public TransactionStore(Database db) {
    this.db = db;
  }

  /** The outcome: applied, or refused (nothing applied) with the reason. */
  public record Outcome(
      boolean applied,
      String error,
      List<AppendOutcome> pushes,
      Map<String, List<AckOutcome>> acks) {}

  /**
   * Applies everything or nothing. A push whose transactionId is already stored in its partition,
   * or an ack that does not succeed, refuses the whole transaction.
   *
   * @throws PartitionMissingException if a push's partition was deleted since it was resolved
   */
  public Outcome apply(List<SegmentWrite> pushes, Map<String, List<AckItem>> acksByGroup) {
    try {
      return db.transaction(
          c -> {
            List<AppendOutcome> appended = push(c, pushes);
            Map<String, List<AckOutcome>> acked = new java.util.TreeMap<>();
            for (Map.Entry<String, List<AckItem>> e : acksByGroup.entrySet()) {
              List<AckOutcome> outcomes = AckStore.call(c, e.getKey(), e.getValue(), true);
              for (AckOutcome o : outcomes) {
                if (!o.success()) {
                  String why = o.error() == null ? "Unsupported ack status" : o.error();
                  throw new Refused("ACK operation failed: " + why);
                }
              }
              acked.put(e.getKey(), outcomes);
            }
            return new Outcome(true, null, appended, acked);
          });
    } catch (Refused r) {
      return new Outcome(false, r.getMessage(), List.of(), Map.of());
    }
  }

  private static List<AppendOutcome> push(Connection c, List<SegmentWrite> pushes)
      throws SQLException {
    if (pushes.isEmpty()) {
      return List.of();
    }
    long[] bases;
    try {
      bases = PushStore.call(c, pushes);
    } catch (SQLException e) {
      if (PushStore.DUPLICATES_FOUND.equals(e.getSQLState())) {
        // inside a transaction a stored transactionId refuses everything, as Queen did
        throw new Refused("PUSH operation failed: a transactionId is already stored");
      }
      throw e;
    }
    List<AppendOutcome> out = new ArrayList<>(pushes.size());
    for (int i = 0; i < pushes.size(); i++) {
      out.add(new AppendOutcome(pushes.get(i), bases[i], Map.of()));
    }
    return out;
  }

  /** Rolls the transaction back with a reason for the client. */
  private static final class Refused extends RuntimeException {
    Refused(String message) {
      super(message, null, false, false);
    }
  }
}
