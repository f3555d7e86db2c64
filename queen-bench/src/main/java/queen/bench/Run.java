package queen.bench;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

/**
 * Runs workers on virtual threads until a deadline: the first {@code warmup} seconds are not
 * measured, the next {@code seconds} are. A worker that throws is counted as an error and goes on;
 * one that returns false is done (the backlog it was draining is empty).
 */
final class Run {
  /** One step of a worker; false when it has nothing more to do. */
  @FunctionalInterface
  interface Step {
    boolean run(int worker) throws Exception;
  }

  final long start = System.nanoTime();
  final long measureFrom;
  final long deadline;
  final Recorder recorder;

  Run(int warmupSeconds, int seconds) {
    this.measureFrom = start + TimeUnit.SECONDS.toNanos(warmupSeconds);
    this.deadline = measureFrom + TimeUnit.SECONDS.toNanos(seconds);
    this.recorder = new Recorder(measureFrom);
  }

  boolean running() {
    return System.nanoTime() < deadline;
  }

  /** Runs {@code workers} copies of the step until the deadline; returns the end time. */
  long workers(int workers, Step step) throws InterruptedException {
    try (ExecutorService pool = Executors.newVirtualThreadPerTaskExecutor()) {
      List<Future<?>> all = new ArrayList<>();
      for (int w = 0; w < workers; w++) {
        int worker = w;
        all.add(
            pool.submit(
                () -> {
                  while (running()) {
                    try {
                      if (!step.run(worker)) {
                        return;
                      }
                    } catch (Exception e) {
                      recorder.error();
                      if (recorder.errors() < 5) {
                        System.err.println("bench: " + e);
                      }
                    }
                  }
                }));
      }
      for (Future<?> f : all) {
        try {
          f.get();
        } catch (java.util.concurrent.ExecutionException e) {
          throw new IllegalStateException(e.getCause());
        }
      }
    }
    long end = Math.min(System.nanoTime(), deadline);
    recorder.stop(end);
    return end;
  }
}
