package queen.server.streams;

import java.util.List;
import java.util.UUID;
import java.util.function.Consumer;
import queen.server.ack.AckRegistry;
import queen.server.ack.AckService;
import queen.server.ack.ReleaseListener;
import queen.server.push.Appended;
import queen.server.push.PushItem;
import queen.server.push.PushResult;
import queen.server.push.PushService;
import queen.server.store.AckOutcome;
import queen.server.store.StreamStore;

/**
 * The server side of Queen's streaming SDK. The SDK pops through the ordinary routes and runs its
 * operators (windows, reducers) itself; the broker keeps each query's state per source partition
 * and commits each processing step, a cycle, atomically: its state operations, its pushes and the
 * ack of what it consumed. The cycle's ack is checked against the pop's lease, so a worker whose
 * lease expired writes nothing and its messages are processed again by whoever holds them next:
 * state and outputs change exactly once per consumed message.
 */
public final class StreamCycles {
  private final StreamStore store;
  private final PushService push;
  private final AckRegistry registry;
  private final ReleaseListener released;

  public StreamCycles(
      StreamStore store, PushService push, AckRegistry registry, ReleaseListener released) {
    this.store = store;
    this.push = push;
    this.registry = registry;
    this.released = released;
  }

  /** Registers a query, or finds it by name (see {@link StreamStore#register}). */
  public StreamStore.Registration register(
      String name, String sourceQueue, String sinkQueue, String configHash, boolean reset) {
    return store.register(name, sourceQueue, sinkQueue, configHash, reset);
  }

  /** The stored values of one (query, partition) that the filter keeps, in key order. */
  public void state(
      UUID queryId,
      UUID partitionId,
      StreamStore.StateFilter filter,
      Consumer<StreamStore.StateRow> each) {
    store.state(queryId, partitionId, filter, each);
  }

  /**
   * One cycle.
   *
   * @param group the consumer group whose lease the ack names
   * @param ack the ack of the consumed message, or null (a cycle that only flushes state)
   * @param release whether the lease ends with a completed ack short of the batch's end
   */
  public record Cycle(
      UUID queryId,
      UUID partitionId,
      String group,
      List<StreamStore.StateOp> ops,
      List<PushItem> items,
      StreamStore.CycleAck ack,
      boolean release) {}

  /**
   * What a cycle did; when not {@code success}, nothing at all. {@code acked} is the messages its
   * ack consumed.
   */
  public record Outcome(
      boolean success,
      String error,
      String sourceQueue,
      int stateOpsApplied,
      List<PushResult> pushes,
      AckOutcome ack,
      long acked) {}

  public Outcome run(Cycle cycle) {
    return push.withFreshPartitions(
        cycle.items(),
        batch -> {
          StreamStore.Cycle done =
              store.cycle(
                  cycle.queryId(),
                  cycle.partitionId(),
                  cycle.group(),
                  cycle.ops(),
                  batch.writes(),
                  cycle.ack(),
                  cycle.release());
          if (!done.applied()) {
            return new Outcome(false, done.error(), null, 0, List.of(), null, 0);
          }
          // effects visible to the next pop at once, as for a push and an ack
          Appended appended = Appended.of(done.pushes());
          batch.announce(appended, push.listener());
          AckOutcome ack = done.ack();
          if (ack != null) {
            AckService.promote(List.of(ack), new UUID[] {cycle.ack().leaseId()}, released);
            if (ack.leaseEnded()) {
              registry.remove(cycle.ack().leaseId(), cycle.partitionId());
            }
          }
          return new Outcome(
              true,
              null,
              done.sourceQueue(),
              cycle.ops().size(),
              batch.results(appended),
              ack,
              done.acked());
        });
  }
}
