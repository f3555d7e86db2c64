package queen.client;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;

/**
 * A running consumer, started by {@link QueueBuilder#consume} with {@code concurrency} workers on
 * virtual threads. Each worker long-polls for a batch, runs the handler, and (with auto-ack) acks
 * the batch completed, or failed with the exception's message if the handler threw, so the broker
 * redelivers it or dead-letters it once the queue's retries are spent.
 *
 * <p>It ends when {@link #stop()} is called, when {@code limit} messages were handled, when no
 * message came for {@code idleMillis}, or when the broker refuses a pop (a 4xx, which {@link
 * #await()} rethrows; and an unreachable broker's last error once {@code idleMillis} passed, for
 * its pops or for an ack). An unreachable broker is retried with a growing pause, never in a busy
 * loop, acks included. Stopping lets running handlers finish and acks their batches; a pop cut
 * short by the stop leaves what it may have leased to be redelivered when the lease ends.
 *
 * <pre>{@code
 * Consumer c = queen.queue("orders").group("billing").concurrency(8).batch(10)
 *     .consume(batch -> billing.charge(batch));
 * Runtime.getRuntime().addShutdownHook(new Thread(c::stop));
 * c.await();
 * }</pre>
 */
public final class Consumer implements AutoCloseable {
  private static final System.Logger LOG = System.getLogger("queen.client");
  private static final Duration EMPTY_PAUSE = Duration.ofMillis(100);

  private final ConsumeSettings settings;
  private final List<Worker> workers = new ArrayList<>();
  private final CountDownLatch stopSignal = new CountDownLatch(1);
  private final CountDownLatch done;
  private final Quota quota;
  private final Handling handling;
  private final AtomicReference<Throwable> fatal = new AtomicReference<>();
  private volatile boolean stopping;
  private volatile long lastMessageAt = System.nanoTime();

  private Consumer(ConsumeSettings settings, BatchHandler onBatch, MessageHandler onMessage) {
    this.settings = settings;
    this.done = new CountDownLatch(settings.concurrency());
    this.quota = new Quota(settings.limit(), settings.batch());
    ConsumerAcks acks = new ConsumerAcks(settings.queen(), this::pause, settings.idleMillis());
    this.handling = new Handling(settings, onBatch, onMessage, acks, quota);
  }

  static Consumer start(ConsumeSettings settings, BatchHandler handler) {
    return new Consumer(settings, handler, null).start();
  }

  static Consumer start(ConsumeSettings settings, MessageHandler handler) {
    return new Consumer(settings, null, handler).start();
  }

  private Consumer start() {
    settings.queen().started(this);
    String queue = settings.query().label();
    for (int i = 0; i < settings.concurrency(); i++) {
      workers.add(new Worker());
    }
    for (int i = 0; i < workers.size(); i++) {
      Worker w = workers.get(i);
      w.thread = Thread.ofVirtual().name("queen-consumer-" + queue + "-" + i).unstarted(w);
    }
    workers.forEach(w -> w.thread.start());
    return this;
  }

  /**
   * Stops taking new messages, waits for running handlers to finish and their acks to be sent, and
   * returns when every worker has ended. Called from inside a handler it only asks the workers to
   * stop.
   */
  public void stop() {
    requestStop();
    if (onWorker()) {
      return;
    }
    awaitQuietly();
  }

  /** Waits up to {@code nanos} for the consumer to end, reporting no error: whether it has. */
  boolean ended(long nanos) throws InterruptedException {
    return done.await(nanos, TimeUnit.NANOSECONDS);
  }

  /** Whether the calling thread is one of this consumer's workers (inside a handler). */
  boolean onWorker() {
    return workers.stream().anyMatch(w -> w.thread == Thread.currentThread());
  }

  /** Same as {@link #stop()}. */
  @Override
  public void close() {
    stop();
  }

  /**
   * Waits until the consumer has ended; throws the error that ended it, if any (for example a
   * {@link QueenException} with the broker's 4xx answer).
   */
  public void await() throws InterruptedException {
    done.await();
    rethrow();
  }

  /** Waits up to {@code timeout}; true if the consumer has ended (then as {@link #await()}). */
  public boolean await(Duration timeout) throws InterruptedException {
    if (!done.await(timeout.toNanos(), TimeUnit.NANOSECONDS)) {
      return false;
    }
    rethrow();
    return true;
  }

  public boolean isRunning() {
    return done.getCount() > 0;
  }

  /** Messages whose handler returned normally. */
  public long processed() {
    return handling.processed();
  }

  /** Messages whose handler threw. */
  public long failed() {
    return handling.failed();
  }

  private void rethrow() {
    Throwable t = fatal.get();
    if (t instanceof RuntimeException r) {
      throw r;
    }
    if (t instanceof Error e) {
      throw e;
    }
    if (t != null) {
      throw new QueenException("consumer failed: " + t, t);
    }
  }

  /** Asks the workers to stop taking messages, without waiting for them. */
  void requestStop() {
    stopping = true;
    stopSignal.countDown();
    workers.forEach(Worker::interruptIfPolling);
  }

  private void awaitQuietly() {
    boolean interrupted = false;
    while (true) {
      try {
        done.await();
        break;
      } catch (InterruptedException e) {
        interrupted = true;
      }
    }
    if (interrupted) {
      Thread.currentThread().interrupt();
    }
  }

  /** Waits for {@code d} or until a stop is requested; false if the consumer should end. */
  private boolean pause(Duration d) {
    try {
      return !stopSignal.await(d.toNanos(), TimeUnit.NANOSECONDS);
    } catch (InterruptedException e) {
      return false;
    }
  }

  private final class Worker implements Runnable {
    Thread thread;
    private boolean polling;
    private Duration backoff = Duration.ZERO;

    /** When the pops began to fail, one after another (System.nanoTime); 0 while they answer. */
    private long failingSince;

    synchronized void interruptIfPolling() {
      if (polling) {
        thread.interrupt();
      }
    }

    @Override
    public void run() {
      try {
        loop();
      } catch (Throwable t) {
        if (fatal.compareAndSet(null, t)) {
          // a consumer nobody awaits (a service that only starts it) ended without a trace
          LOG.log(
              System.Logger.Level.ERROR,
              "consumer of " + settings.query().label() + " stopped: " + t,
              t);
        }
        requestStop();
      } finally {
        done.countDown();
        if (done.getCount() == 0) {
          settings.queen().ended(Consumer.this);
        }
      }
    }

    private void loop() {
      while (!stopping) {
        int want = quota.reserve();
        if (want == 0) {
          if (processed() + failed() >= settings.limit()) {
            requestStop();
          }
          return;
        }
        List<Message> batch;
        long polledAt = System.nanoTime();
        try {
          batch = poll(want);
        } catch (CancellationException cancelled) {
          quota.unreserve(want);
          if (stopping) {
            return;
          }
          continue; // interrupted by someone else: a worker ends only when asked to stop
        } catch (QueenException e) {
          quota.unreserve(want);
          failingSince = failingSince == 0 ? polledAt : failingSince;
          // idleMillis ends a consumer whose broker stays away that long too, with the last error
          if (!e.retryable()
              || settings.idleMillis() > 0
                  && TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - failingSince)
                      >= settings.idleMillis()) {
            throw e;
          }
          backoff = Backoff.next(backoff);
          LOG.log(System.Logger.Level.WARNING, "pop failed, retrying in " + backoff + ": " + e);
          if (!pause(backoff)) {
            return;
          }
          continue;
        }
        backoff = Duration.ZERO;
        failingSince = 0;
        quota.unreserve(want - batch.size());
        if (batch.isEmpty()) {
          if (idleFor() >= settings.idleMillis() && settings.idleMillis() > 0) {
            // the other workers' polls end by the same idle deadline: cut off, one that was
            // receiving messages left them leased until the lease ran out
            stopping = true;
            stopSignal.countDown();
            return;
          }
          // a long poll answered empty well before its wait (pops in maintenance answer at once)
          // pauses too, or the worker would ask again and again as fast as the broker answers
          // (at least the pause's time: a wait of 0 answers at once, every time)
          boolean early =
              TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - polledAt)
                  < Math.max(settings.timeoutMillis() / 2, EMPTY_PAUSE.toMillis());
          if ((!settings.longPoll() || early) && !pause(EMPTY_PAUSE)) {
            return;
          }
          continue;
        }
        lastMessageAt = System.nanoTime();
        handling.handle(batch, thread.getName());
      }
    }

    private List<Message> poll(int n) {
      synchronized (this) {
        if (stopping) {
          return List.of();
        }
        // a flag a handler left set must not cancel this poll: only a stop interrupts a poll
        Thread.interrupted();
        polling = true;
      }
      try {
        int waitMillis = settings.timeoutMillis();
        if (settings.idleMillis() > 0) {
          waitMillis = (int) Math.max(1, Math.min(waitMillis, settings.idleMillis() - idleFor()));
        }
        return settings.query().pop(n, waitMillis, null, "*");
      } finally {
        synchronized (this) {
          polling = false;
          Thread.interrupted();
        }
      }
    }

    private long idleFor() {
      return TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - lastMessageAt);
    }
  }
}
