package queen.server.store;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.UUID;

/**
 * Applies a transaction's pushes and acks in one PostgreSQL transaction, all or nothing. Pushes go
 * first, then acks group by group: every transaction takes its locks in the same order.
 *
 * <p>The transactionId index is keyed by a hash, and PostgreSQL cannot open a frame to tell a
 * stored transactionId from a collision. When the index names a candidate, the transaction rolls
 * back, the candidates' frames are read, and it runs again knowing them: a stored transactionId
 * refuses everything (as in Queen), a collision is let through, an ambiguous ack gets its offset.
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
    PushStore.Collisions known = new PushStore.Collisions();
    Map<String, Long[]> offsets = new HashMap<>();
    int idle = 0; // rounds whose candidates taught nothing, as in PushStore
    while (true) {
      try {
        return db.transaction(
            c -> {
              List<AppendOutcome> appended = new ArrayList<>();
              if (!pushes.isEmpty()) {
                List<PushStore.Placed> placed = PushStore.call(c, pushes, known);
                for (int i = 0; i < pushes.size(); i++) {
                  SegmentWrite s = pushes.get(i);
                  appended.add(
                      new AppendOutcome(
                          s.partitionId(),
                          s,
                          placed.get(i).baseOffset(),
                          placed.get(i).createdAt(),
                          Map.of()));
                }
              }
              Map<String, List<AckOutcome>> acked =
                  new TreeMap<>(Comparator.nullsFirst(Comparator.naturalOrder()));
              for (Map.Entry<String, List<AckItem>> e : acksByGroup.entrySet()) {
                List<AckOutcome> outcomes =
                    AckStore.call(c, e.getKey(), e.getValue(), true, offsets.get(e.getKey()));
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
      } catch (StoreException e) {
        if (PushStore.DUPLICATES_FOUND.equals(e.sqlState())) {
          Candidates read = readCandidates(pushes, known);
          if (read == Candidates.ONE_STORED) {
            // inside a transaction a stored transactionId refuses everything, as Queen did
            return new Outcome(
                false,
                "PUSH operation failed: a transactionId is already stored",
                List.of(),
                Map.of());
          }
          // retention may delete a candidate between the index's answer and its read: try again
          idle = read == Candidates.NOTHING_NEW ? idle + 1 : 0;
          if (idle == 3) {
            throw new IllegalStateException(
                "push refused for a stored transaction id, but no stored message matches");
          }
        } else if (AckStore.AMBIGUOUS.equals(e.sqlState()) && offsets.isEmpty()) {
          for (Map.Entry<String, List<AckItem>> g : acksByGroup.entrySet()) {
            offsets.put(g.getKey(), db.autocommit(c -> AckStore.offsets(c, g.getValue())));
          }
        } else {
          throw e;
        }
      }
    }
  }

  /** What the candidates of a push refused for a stored transactionId were. */
  private enum Candidates {
    /** One of them is the pushed message: the transactionId is stored. */
    ONE_STORED,
    /** Collisions, learned into {@code known}: the push may go on. */
    COLLISIONS,
    /** None that was not known already (or retention deleted them since). */
    NOTHING_NEW
  }

  /** Reads the candidates of the pushed transaction ids; collisions join {@code known}. */
  private Candidates readCandidates(List<SegmentWrite> pushes, PushStore.Collisions known) {
    List<UUID> pids = new ArrayList<>();
    List<String> txns = new ArrayList<>();
    for (SegmentWrite s : pushes) {
      for (String t : s.transactionIds()) {
        pids.add(s.partitionId());
        txns.add(t);
      }
    }
    List<TxnCandidates.Match> matches = db.autocommit(c -> TxnCandidates.read(c, pids, txns));
    boolean progress = false;
    for (TxnCandidates.Match m : matches) {
      if (m.same()) {
        return Candidates.ONE_STORED;
      }
      progress |= known.add(m.partitionId(), m.offset());
    }
    return progress ? Candidates.COLLISIONS : Candidates.NOTHING_NEW;
  }

  /** Rolls the transaction back with a reason for the client. */
  private static final class Refused extends RuntimeException {
    Refused(String message) {
      super(message, null, false, false);
    }
  }
}
