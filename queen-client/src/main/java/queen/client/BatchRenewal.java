package queen.client;

import java.time.Duration;
import java.util.concurrent.CancellationException;
import java.util.function.BooleanSupplier;

/**
 * Renews a batch's lease while its handler runs ({@link QueueBuilder#renewLease}), on a platform
 * thread the consumer interrupts when the handler returns: virtual threads are not time-sliced, so
 * handlers computing on every carrier thread (or pinning them, on JDK 21) starved a virtual renewer
 * until they returned, and their batches went to other consumers at the lease's end. Each renewal
 * asks for twice the interval from now, at least the broker's 60 s: asking for less than the
 * interval would let the lease end between two renewals (an interval of 2 min renewed to 60 s each
 * time left a 6 min handler's batch to another worker once its lease time ran out). It skips its
 * renewals while the batch's ack is being sent: renewed for an ack the broker kept refusing (a 500
 * on every try), the batch was held from every consumer for good; left to its lease's end, it is
 * delivered again. (A renewal skipped for an ack that is answered costs nothing: the lease still
 * runs for one more interval at least.)
 */
final class BatchRenewal {
  private static final System.Logger LOG = System.getLogger("queen.client");

  private BatchRenewal() {}

  /** The renewing thread, or null when renewal is off or the batch has no lease. */
  static Thread start(
      Queen queen, String lease, long intervalMillis, BooleanSupplier acking, String name) {
    if (intervalMillis == 0 || lease.isEmpty()) {
      return null;
    }
    Duration every = Duration.ofMillis(intervalMillis);
    int seconds =
        (int) Math.min(Integer.MAX_VALUE, Math.max(60, (2 * intervalMillis + 999) / 1000));
    return Thread.ofPlatform()
        .daemon()
        .name(name)
        .start(
            () -> {
              try {
                while (true) {
                  Thread.sleep(every);
                  if (!acking.getAsBoolean()) {
                    renew(queen, lease, seconds);
                  }
                }
              } catch (InterruptedException | CancellationException batchFinished) {
                Thread.currentThread().interrupt();
              }
            });
  }

  private static void renew(Queen queen, String lease, int seconds) {
    try {
      LeaseRenewal r = queen.renew(lease, seconds);
      if (!r.success()) {
        LOG.log(System.Logger.Level.WARNING, "lease " + lease + " not renewed: " + r.error());
      }
    } catch (QueenException e) {
      LOG.log(System.Logger.Level.WARNING, "lease renewal failed: " + e);
    }
  }
}
