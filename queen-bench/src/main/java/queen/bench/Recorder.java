package queen.bench;

import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.LongAdder;
import org.HdrHistogram.ConcurrentHistogram;
import org.HdrHistogram.Histogram;

/**
 * Counts what happened during the measured part of a run: messages, requests, errors, and a latency
 * histogram in microseconds. Anything recorded during warm-up is ignored.
 */
final class Recorder {
  private final Histogram latency = new ConcurrentHistogram(TimeUnit.MINUTES.toMicros(5), 3);
  private final LongAdder messages = new LongAdder();
  private final LongAdder requests = new LongAdder();
  private final LongAdder errors = new LongAdder();
  private final long measureFrom;
  private volatile long measureUntil = Long.MAX_VALUE;

  Recorder(long measureFromNanos) {
    this.measureFrom = measureFromNanos;
  }

  boolean measuring(long now) {
    return now >= measureFrom && now < measureUntil;
  }

  /** A request that took from {@code startNanos} to now and moved {@code count} messages. */
  void request(long startNanos, int count) {
    long now = System.nanoTime();
    if (measuring(now)) {
      requests.increment();
      messages.add(count);
      latency.recordValue(Math.max(1, TimeUnit.NANOSECONDS.toMicros(now - startNanos)));
    }
  }

  /** A latency measured elsewhere (end to end), in nanoseconds. */
  void latency(long nanos) {
    if (measuring(System.nanoTime())) {
      latency.recordValue(Math.max(1, TimeUnit.NANOSECONDS.toMicros(nanos)));
    }
  }

  void messages(int count) {
    if (measuring(System.nanoTime())) {
      messages.add(count);
    }
  }

  void error() {
    errors.increment();
  }

  void stop(long nanos) {
    measureUntil = nanos;
  }

  double seconds(long endNanos) {
    return (Math.min(endNanos, measureUntil) - measureFrom) / 1e9;
  }

  long messages() {
    return messages.sum();
  }

  long requests() {
    return requests.sum();
  }

  long errors() {
    return errors.sum();
  }

  long percentile(double p) {
    return latency.getTotalCount() == 0 ? 0 : latency.getValueAtPercentile(p);
  }
}
