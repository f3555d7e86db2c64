package queen.server.ack;

import java.util.ArrayList;
import java.util.Collections;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import queen.server.store.AckOutcome;
import queen.server.store.AckStore;
import queen.server.store.BatchAck;
import queen.server.store.Coalescer;
import queen.server.store.LockOrder;

/**
 * Merges the whole-batch acks of concurrent requests into one statement (see {@link Coalescer}):
 * under load, many consumers' acks cost one round trip and one commit. Each flush advances its
 * cursors in partition-id order, the lock order pushes use too; two requests acking the same lease
 * of the same partition never share a flush, so the second sees what the first did.
 */
final class AckCommit {
  /** Batches merged into one statement at most. */
  static final int MAX_BATCHES = 1_000;

  private final AckStore store;
  private final Coalescer<List<BatchAck>, List<AckOutcome>> coalescer;

  AckCommit(AckStore store, int maxInFlight) {
    this.store = store;
    this.coalescer = new Coalescer<>(this::flush, Selection::new, maxInFlight);
  }

  /** Outcomes in the order of {@code batches}. */
  List<AckOutcome> ack(List<BatchAck> batches) {
    return coalescer.submit(batches);
  }

  private static final class Selection implements Coalescer.Selection<List<BatchAck>> {
    private final Set<BatchAck> taken = new HashSet<>();

    @Override
    public boolean full() {
      return taken.size() >= MAX_BATCHES;
    }

    @Override
    public boolean accept(List<BatchAck> batches) {
      for (BatchAck b : batches) {
        if (taken.contains(b)) {
          return false;
        }
      }
      taken.addAll(batches);
      return true;
    }
  }

  private record Slot(int request, int position, BatchAck batch) {}

  private List<List<AckOutcome>> flush(List<List<BatchAck>> requests) {
    List<Slot> slots = new ArrayList<>();
    List<List<AckOutcome>> out = new ArrayList<>(requests.size());
    for (int r = 0; r < requests.size(); r++) {
      List<BatchAck> batches = requests.get(r);
      for (int i = 0; i < batches.size(); i++) {
        slots.add(new Slot(r, i, batches.get(i)));
      }
      out.add(new ArrayList<>(Collections.nCopies(batches.size(), (AckOutcome) null)));
    }
    slots.sort(
        (a, b) -> LockOrder.PARTITIONS.compare(a.batch().partitionId(), b.batch().partitionId()));
    List<AckOutcome> outcomes = store.ackBatches(slots.stream().map(Slot::batch).toList());
    for (int s = 0; s < slots.size(); s++) {
      Slot slot = slots.get(s);
      out.get(slot.request()).set(slot.position(), outcomes.get(s));
    }
    return out;
  }
}
