package queen.server.store;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Function;
import java.util.function.Supplier;

/**
 * Merges concurrent requests into one store call: one round trip and one commit (one WAL flush) for
 * all of them, instead of one each.
 *
 * <p>A request never waits for company: with fewer than {@code maxInFlight} flushes running, its
 * arrival starts one on its own thread at once. Requests that arrive while the flushes are busy
 * queue up, and when a flush ends one of them runs the next, taking them together, so merging grows
 * with load and adds no latency without it. A thread flushes only until its own request is done:
 * one that went on while work kept arriving held its own answer for as long as the load lasted. A
 * {@link Selection} decides which queued requests may share a flush.
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
  private final ReentrantLock lock = new ReentrantLock();
  private final Condition ended = lock.newCondition();

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
    Pending<I, O> mine = new Pending<>(request, new CompletableFuture<>());
    queue.add(mine);
    while (!mine.done().isDone()) {
      if (!flushOnce()) {
        awaitFlushEnd(mine);
      }
    }
    try {
      return mine.done().join();
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

  /** Runs one flush of the queued work on this thread; false when no slot is free or none waits. */
  private boolean flushOnce() {
    int running = flushing.get();
    if (running >= maxInFlight || queue.isEmpty()) {
      return false;
    }
    if (!flushing.compareAndSet(running, running + 1)) {
      return true; // another thread took a slot meanwhile: look again
    }
    try {
      run(take());
    } finally {
      flushing.decrementAndGet();
      lock.lock();
      try {
        ended.signalAll();
      } finally {
        lock.unlock();
      }
    }
    return true;
  }

  /**
   * Waits until a flush ends, unless this request is done already or there is a flush this thread
   * may run: a slot is free and work waits. Checked under the lock that every flush's end signals
   * under, so no end goes unseen.
   */
  private void awaitFlushEnd(Pending<I, O> mine) {
    lock.lock();
    try {
      while (!mine.done().isDone() && (flushing.get() >= maxInFlight || queue.isEmpty())) {
        ended.awaitUninterruptibly();
      }
    } finally {
      lock.unlock();
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
    } catch (Error e) {
      // an OutOfMemoryError too: the requests merged here must not wait for ever
      pending.forEach(p -> p.done().completeExceptionally(e));
      throw e;
    }
    for (int i = 0; i < pending.size(); i++) {
      pending.get(i).done().complete(outcomes.get(i));
    }
  }
}
