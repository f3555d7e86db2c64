package queen.server.store;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.function.Function;
import org.junit.jupiter.api.Test;

class CoalescerTest {
  /** Accepts everything except odd numbers once an odd one is taken; full at {@code cap}. */
  private static Coalescer.Selection<Integer> oneOddPerFlush(int cap) {
    return new Coalescer.Selection<>() {
      int taken;
      boolean odd;

      @Override
      public boolean full() {
        return taken >= cap;
      }

      @Override
      public boolean accept(Integer n) {
        if (n % 2 == 1) {
          if (odd) {
            return false;
          }
          odd = true;
        }
        taken++;
        return true;
      }
    };
  }

  @Test
  void requestsThatQueueWhileTheFlushIsBusyShareTheNextFlush() throws Exception {
    CountDownLatch release = new CountDownLatch(1);
    List<List<Integer>> flushes = new ArrayList<>();
    Function<List<Integer>, List<String>> flush =
        batch -> {
          synchronized (flushes) {
            flushes.add(batch);
          }
          if (batch.contains(0)) {
            await().atMost(Duration.ofSeconds(10)).until(() -> release.getCount() == 0);
          }
          return batch.stream().map(n -> "done " + n).toList();
        };
    Coalescer<Integer, String> c = new Coalescer<>(flush, () -> oneOddPerFlush(100), 1);
    try (ExecutorService pool = Executors.newVirtualThreadPerTaskExecutor()) {
      Future<String> first = pool.submit(() -> c.submit(0));
      await().atMost(Duration.ofSeconds(5)).until(() -> flushes.size() == 1);
      List<Future<String>> rest = new ArrayList<>();
      for (int n = 2; n <= 20; n += 2) {
        int x = n;
        rest.add(pool.submit(() -> c.submit(x)));
      }
      await().atMost(Duration.ofSeconds(5)).until(() -> c.queued() == 10);
      release.countDown();

      assertThat(first.get()).isEqualTo("done 0");
      for (int i = 0; i < rest.size(); i++) {
        assertThat(rest.get(i).get()).isEqualTo("done " + (2 * i + 2));
      }
    }
    assertThat(flushes).hasSize(2);
    assertThat(flushes.get(1)).hasSize(10);
  }

  @Test
  void aRequestTheSelectionDefersWaitsForTheNextFlush() throws Exception {
    CountDownLatch release = new CountDownLatch(1);
    List<List<Integer>> flushes = new ArrayList<>();
    Function<List<Integer>, List<Integer>> flush =
        batch -> {
          synchronized (flushes) {
            flushes.add(batch);
          }
          if (batch.contains(0)) {
            await().atMost(Duration.ofSeconds(10)).until(() -> release.getCount() == 0);
          }
          return batch;
        };
    Coalescer<Integer, Integer> c = new Coalescer<>(flush, () -> oneOddPerFlush(100), 1);
    try (ExecutorService pool = Executors.newVirtualThreadPerTaskExecutor()) {
      Future<Integer> first = pool.submit(() -> c.submit(0));
      await().atMost(Duration.ofSeconds(5)).until(() -> flushes.size() == 1);
      Future<Integer> one = pool.submit(() -> c.submit(1));
      await().atMost(Duration.ofSeconds(5)).until(() -> c.queued() == 1);
      Future<Integer> three = pool.submit(() -> c.submit(3));
      await().atMost(Duration.ofSeconds(5)).until(() -> c.queued() == 2);
      release.countDown();
      assertThat(List.of(first.get(), one.get(), three.get())).containsExactly(0, 1, 3);
    }
    assertThat(flushes).containsExactly(List.of(0), List.of(1), List.of(3));
  }

  @Test
  void aThreadThatFlushedItsOwnRequestAnswersWhileLaterWorkIsStillFlushing() throws Exception {
    CountDownLatch releaseFirst = new CountDownLatch(1);
    CountDownLatch releaseSecond = new CountDownLatch(1);
    List<List<Integer>> flushes = new ArrayList<>();
    Function<List<Integer>, List<Integer>> flush =
        batch -> {
          synchronized (flushes) {
            flushes.add(batch);
          }
          CountDownLatch gate = batch.contains(0) ? releaseFirst : releaseSecond;
          await().atMost(Duration.ofSeconds(20)).until(() -> gate.getCount() == 0);
          return batch;
        };
    Coalescer<Integer, Integer> c = new Coalescer<>(flush, () -> oneOddPerFlush(100), 1);
    try (ExecutorService pool = Executors.newVirtualThreadPerTaskExecutor()) {
      Future<Integer> first = pool.submit(() -> c.submit(0));
      await().atMost(Duration.ofSeconds(5)).until(() -> flushes.size() == 1);
      Future<Integer> second = pool.submit(() -> c.submit(2));
      await().atMost(Duration.ofSeconds(5)).until(() -> c.queued() == 1);
      releaseFirst.countDown();
      // under load the queue never empties: a thread flushing on for others never answered
      assertThat(first.get(10, java.util.concurrent.TimeUnit.SECONDS)).isZero();
      await().atMost(Duration.ofSeconds(5)).until(() -> flushes.size() == 2);
      assertThat(second).as("its flush still runs").isNotDone();
      releaseSecond.countDown();
      assertThat(second.get()).isEqualTo(2);
    }
  }

  @Test
  void aFailedFlushFailsEveryRequestInIt() {
    Coalescer<Integer, Integer> c =
        new Coalescer<>(
            batch -> {
              throw new IllegalStateException("database gone");
            },
            () -> oneOddPerFlush(100),
            2);
    assertThatThrownBy(() -> c.submit(4)).isInstanceOf(IllegalStateException.class);
  }
}
