package queen.client;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;

/**
 * What a {@link Consumer}'s workers do with a batch they popped: run the batch's handler or each
 * message's, keep its lease renewed meanwhile, ack what was handled (completed, or failed with the
 * handler's error) when auto-ack is on, and count both.
 */
final class Handling {
  private final ConsumeSettings settings;
  private final BatchHandler onBatch;
  private final MessageHandler onMessage;
  private final ConsumerAcks acks;
  private final Quota quota;
  private final AtomicLong processed = new AtomicLong();
  private final AtomicLong failed = new AtomicLong();

  Handling(
      ConsumeSettings settings,
      BatchHandler onBatch,
      MessageHandler onMessage,
      ConsumerAcks acks,
      Quota quota) {
    this.settings = settings;
    this.onBatch = onBatch;
    this.onMessage = onMessage;
    this.acks = acks;
    this.quota = quota;
  }

  /** Messages whose handler returned normally. */
  long processed() {
    return processed.get();
  }

  /** Messages whose handler threw. */
  long failed() {
    return failed.get();
  }

  /** Runs the handler on a batch a worker popped, and acks it when auto-ack is on. */
  void handle(List<Message> batch, String workerName) {
    AtomicBoolean acking = new AtomicBoolean();
    Thread renewer =
        BatchRenewal.start(
            settings.queen(),
            batch.getFirst().leaseId(),
            settings.renewLeaseMillis(),
            acking::get,
            workerName + "-renew");
    try {
      if (onBatch != null) {
        handleBatch(batch, acking);
      } else {
        handleEach(batch, acking);
      }
    } finally {
      if (renewer != null) {
        renewer.interrupt();
      }
    }
  }

  /**
   * Clears an interrupt flag the handler left set (after restoring it on an InterruptedException,
   * say), which would cancel its ack: a stop never interrupts a handler, so the flag is its own.
   */
  private void handlerReturned() {
    Thread.interrupted();
  }

  private void handleBatch(List<Message> batch, AtomicBoolean acking) {
    try {
      // the handler's own list: one it cleared or filtered was what got acked, the rest left
      // leased until their lease ran out, then handled again
      onBatch.handle(new ArrayList<>(batch));
    } catch (Throwable e) {
      handlerReturned();
      rethrowJvmFailure(e);
      failed.addAndGet(batch.size());
      ack(batch, "failed", errorText(e), acking);
      return;
    }
    handlerReturned();
    processed.addAndGet(batch.size());
    ack(batch, "completed", null, acking);
  }

  /**
   * Handles in order. A message that throws is acked failed and the rest of its partition left for
   * redelivery; the batch's other partitions go on (left unhandled, they waited for their lease to
   * expire). A failed message that went to the dead letters leaves the rest of its partition under
   * the lease, which is handled after it (left, it waited for the lease's end).
   */
  private void handleEach(List<Message> batch, AtomicBoolean acking) {
    for (List<Message> left = batch; !left.isEmpty(); ) {
      left = handleEachOnce(left, acking);
    }
  }

  /** One pass of {@link #handleEach}; what is still to handle. */
  private List<Message> handleEachOnce(List<Message> batch, AtomicBoolean acking) {
    List<Message> ok = new ArrayList<>(batch.size());
    Map<String, Throwable> failures = new LinkedHashMap<>();
    List<Message> failedMessages = new ArrayList<>();
    Map<String, List<Message>> skipped = new LinkedHashMap<>();
    Throwable jvmFailure = null;
    for (Message m : batch) {
      if (failures.containsKey(m.partitionId())) {
        skipped.computeIfAbsent(m.partitionId(), k -> new ArrayList<>()).add(m);
        continue;
      }
      try {
        onMessage.handle(m);
        ok.add(m);
        // a flag this handler left set cancelled the next one's blocking calls, and that
        // message was acked failed
        handlerReturned();
      } catch (Throwable e) {
        handlerReturned();
        if (isJvmFailure(e)) {
          jvmFailure = e; // not the message's doing: left unacked, its budget uncharged
          break;
        }
        failures.put(m.partitionId(), e);
        failedMessages.add(m);
      }
    }
    handlerReturned();
    processed.addAndGet(ok.size());
    failed.addAndGet(failedMessages.size());
    List<Message> next = new ArrayList<>();
    try {
      if (!ok.isEmpty()) {
        ack(ok, "completed", null, acking);
      }
      for (Message m : failedMessages) {
        List<AckResult> r =
            ack(List.of(m), "failed", errorText(failures.get(m.partitionId())), acking);
        List<Message> rest = skipped.getOrDefault(m.partitionId(), List.of());
        // dead-lettered, or repeated after its answer was lost (then "already consumed", dlq
        // false): the lease still holds the rest, which waited a lease time when taken as gone
        if (jvmFailure == null
            && r.size() == 1
            && r.getFirst().success()
            && !r.getFirst().leaseReleased()) {
          next.addAll(rest);
        }
      }
    } catch (RuntimeException e) {
      // an ack that ends the consumer (idleMillis) must not hide the JVM's failure behind it
      if (jvmFailure != null) {
        rethrowJvmFailure(jvmFailure);
      }
      throw e;
    }
    quota.unreserve(batch.size() - ok.size() - failedMessages.size() - next.size());
    if (jvmFailure != null) {
      rethrowJvmFailure(jvmFailure);
    }
    return next;
  }

  private List<AckResult> ack(
      List<Message> messages, String status, String error, AtomicBoolean acking) {
    return settings.autoAck() ? acks.send(messages, status, error, acking) : List.of();
  }

  /**
   * Whether a handler's throwable is the JVM's failure (out of memory, an internal error), which
   * ends the consumer with its message unacked, not the message's. Any other error, a
   * StackOverflowError or an AssertionError on one poison message say, is acked failed like an
   * exception (left unacked, it came back at every lease's end and was never dead lettered).
   */
  private static boolean isJvmFailure(Throwable e) {
    return e instanceof VirtualMachineError && !(e instanceof StackOverflowError);
  }

  private static void rethrowJvmFailure(Throwable e) {
    if (isJvmFailure(e)) {
      throw (VirtualMachineError) e;
    }
  }

  private static String errorText(Throwable e) {
    return e.getMessage() == null ? e.getClass().getName() : e.getMessage();
  }
}
