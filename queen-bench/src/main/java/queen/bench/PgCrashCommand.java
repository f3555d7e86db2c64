package queen.bench;

import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.Callable;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/**
 * {@code queen bench pg-crash}: consumers pop with leases and ack while PostgreSQL is crashed and
 * started again (pop leases commit without waiting for their flush, so a crash may forget some).
 * Every message must be delivered, and in the end acked: by an answer, or, where the crash cut an
 * ack's answer, by no longer being delivered once every lease has run out.
 */
@Command(
    name = "pg-crash",
    description =
        "Pops with leases and acks while PostgreSQL is crashed and restarted (--crash); checks"
            + " that every message is delivered and acked in the end, and counts the ones delivered"
            + " again.")
final class PgCrashCommand implements Callable<Integer> {
  /** Short leases: a lease the crash kept but whose ack failed comes back soon. */
  private static final int LEASE_SECONDS = 5;

  /** Longer than a lease: nothing delivered for this long means nothing is left. */
  private static final long QUIET = TimeUnit.SECONDS.toNanos(LEASE_SECONDS + 2);

  @Mixin BrokerUrl broker;

  @Option(
      names = "--messages",
      defaultValue = "4000",
      description = "Messages pushed before the consumers start (default 4000).")
  int messages;

  @Option(names = "--partitions", defaultValue = "8", description = "Partitions (default 8).")
  int partitions;

  @Option(names = "--consumers", defaultValue = "8", description = "Consumers (default 8).")
  int consumers;

  @Option(names = "--batch", defaultValue = "5", description = "Messages a pop takes (default 5).")
  int batch;

  @Option(
      names = "--crash",
      defaultValue =
          "v=$(ls /etc/postgresql); pg_ctlcluster --skip-systemctl-redirect $v main stop -m"
              + " immediate && sleep 2 && pg_ctlcluster --skip-systemctl-redirect $v main start",
      description =
          "Crashes PostgreSQL and starts it again, run by bash once a third of the messages are"
              + " acked (default: the local Debian cluster, stopped in immediate mode).")
  String crash;

  @Option(
      names = "--timeout",
      defaultValue = "120",
      description =
          "Seconds within which a third of the messages must be acked before the crash, and"
              + " then all of them after it (default ${DEFAULT-VALUE}).")
  int timeout;

  @Override
  public Integer call() throws Exception {
    String queue = "bench-crash-" + Long.toString(System.currentTimeMillis(), 36);
    Set<String> acked = ConcurrentHashMap.newKeySet();
    Set<String> delivered = ConcurrentHashMap.newKeySet();
    AtomicLong lastDelivery = new AtomicLong(System.nanoTime());
    AtomicLong deliveries = new AtomicLong();
    AtomicLong errors = new AtomicLong();
    AtomicBoolean stop = new AtomicBoolean();
    try (BrokerTarget target = new BrokerTarget(broker.url)) {
      target.configure(queue, "{\"leaseTime\":" + LEASE_SECONDS + "}");
      for (int p = 0; p < partitions; p++) {
        for (int from = 0; from < messages / partitions; from += 100) {
          List<Target.Message> items = new ArrayList<>();
          for (int n = from; n < Math.min(from + 100, messages / partitions); n++) {
            items.add(new Target.Message("p" + p, "m-" + p + "-" + n, Payloads.of(30, 0)));
          }
          target.push(queue, items);
        }
      }
      int total = messages / partitions * partitions;
      try (ExecutorService pool = Executors.newVirtualThreadPerTaskExecutor()) {
        List<Future<?>> workers = new ArrayList<>();
        for (int c = 0; c < consumers; c++) {
          workers.add(
              pool.submit(
                  () -> {
                    while (!stop.get()) {
                      try {
                        Target.Delivery d = target.pop(queue, "crash", batch, false, 500);
                        if (d != null) {
                          lastDelivery.set(System.nanoTime());
                          deliveries.addAndGet(d.size());
                          d.messages().forEach(m -> delivered.add(m.id()));
                          acked.addAll(target.acked(d));
                        }
                      } catch (Exception e) {
                        // the database is away: the broker answers 503 until it is back
                        errors.incrementAndGet();
                        TimeUnit.MILLISECONDS.sleep(100);
                      }
                    }
                    return null;
                  }));
        }
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(timeout);
        while (acked.size() < total / 3 && System.nanoTime() < deadline) {
          TimeUnit.MILLISECONDS.sleep(10);
        }
        int atCrash = acked.size();
        // no crash when the consumers did not get that far: the run has failed already
        int exit =
            atCrash < total / 3
                ? -1
                : new ProcessBuilder("bash", "-c", crash).inheritIO().start().waitFor();
        deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(timeout);
        // done when every ack was answered, or when all were delivered and nothing more came for
        // longer than a lease: an ack whose answer the crash cut had landed
        while (acked.size() < total
            && !(delivered.size() == total && System.nanoTime() - lastDelivery.get() > QUIET)
            && System.nanoTime() < deadline) {
          TimeUnit.MILLISECONDS.sleep(50);
        }
        boolean settled = System.nanoTime() < deadline;
        stop.set(true);
        for (Future<?> f : workers) {
          f.get();
        }
        System.out.printf(
            "pg-crash  crash command exit %d after %,d acks; delivered %,d of %,d, acked by an"
                + " answer %,d; %,d deliveries (%,d again); %,d failed requests%n",
            exit,
            atCrash,
            delivered.size(),
            total,
            acked.size(),
            deliveries.get(),
            deliveries.get() - delivered.size(),
            errors.get());
        return exit == 0 && delivered.size() == total && settled ? 0 : 1;
      }
    }
  }
}
