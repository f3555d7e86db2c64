package queen.server.store;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Function;
import java.util.function.Supplier;

/**
 * Merges concurrent requests into one store call: one round trip and one commit (one WAL flush) for
 * all of them, instead of one each.
 *
 * <p>A request never waits for company: with fewer than {@code maxInFlight} flushes running, its
 * arrival starts one on its own thread at once. Requests that arrive while the flushes are busy
 * queue up and the next flush takes them together, so merging grows with load and adds no latency
 * without it. A {@link Selection} decides which queued requests may share a flush.
 *
 * @param <I> one request
 * @param <O> its outcome
 */
public final class Coalescer<I, O> {
  /** Chooses the requests of one flush, in queue order. */
  public interface Selection<I> {
    /** True when the flush should take no more. */
    boolean full();

    /** Takes the request into the flush, or answers false to leave it for the next one. */
    boolean accept(I request);
  }

  private record Pending<I, O>(I request, CompletableFuture<O> done) {}

  private final Function<List<I>, List<O>> flush;
  private final Supplier<Selection<I>> selection;
  private final int maxInFlight;
  private final ConcurrentLinkedQueue<Pending<I, O>> queue = new ConcurrentLinkedQueue<>();
  private final AtomicInteger flushing = new AtomicInteger();

  /**
   * @param flush runs the merged requests, answering their outcomes in order; if it throws, every
   *     request of the flush fails with that exception
   */
  public Coalescer(
      Function<List<I>, List<O>> flush, Supplier<Selection<I>> selection, int maxInFlight) {
    this.flush = flush;
    this.selection = selection;
    this.maxInFlight = maxInFlight;
  }

  /** Runs the request, merged with whatever arrives meanwhile; its outcome or its exception. */
  public O submit(I request) {
    CompletableFuture<O> done = new CompletableFuture<>();
    queue.add(new Pending<>(request, done));
    drain();
    try {
      return done.join();
    } catch (CompletionException e) {
      if (e.getCause() instanceof RuntimeException r) {
        throw r;
      }
      throw e;
    }
  }

  /** Requests waiting for a flush. */
  public int queued() {
    return queue.size();
  }

  /** Runs flushes on the calling thread while there is queued work and a flush slot is free. */
  private void drain() {
    while (!queue.isEmpty()) {
      int running = flushing.get();
      if (running >= maxInFlight) {
        return; // a running flush picks the queued work up when it ends
      }
      if (!flushing.compareAndSet(running, running + 1)) {
        continue;
      }
      try {
        run(take());
      } finally {
        flushing.decrementAndGet();
      }
    }
  }

  private List<Pending<I, O>> take() {
    Selection<I> s = selection.get();
    List<Pending<I, O>> taken = new ArrayList<>();
    List<Pending<I, O>> later = new ArrayList<>();
    for (Pending<I, O> p; !s.full() && (p = queue.poll()) != null; ) {
      (s.accept(p.request()) ? taken : later).add(p);
    }
    queue.addAll(later);
    return taken;
  }

  private void run(List<Pending<I, O>> pending) {
    if (pending.isEmpty()) {
      return;
    }
    List<O> outcomes;
    try {
      outcomes = flush.apply(pending.stream().map(Pending::request).toList());
    } catch (RuntimeException e) {
      pending.forEach(p -> p.done().completeExceptionally(e));
      return;
    }
    for (int i = 0; i < pending.size(); i++) {
      pending.get(i).done().complete(outcomes.get(i));
    }
  }
}
