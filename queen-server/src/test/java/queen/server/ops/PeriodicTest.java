package queen.server.ops;

import static org.awaitility.Awaitility.await;

import java.time.Duration;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

class PeriodicTest {
  // the executor suppressed every run after one that threw: a retention stopped so, silently
  @Test
  void aRunThatThrowsAnErrorDoesNotEndTheSchedule() {
    AtomicInteger runs = new AtomicInteger();
    ScheduledExecutorService timer =
        Periodic.every(
            "queen-periodic-test",
            Duration.ofMillis(10),
            () -> {
              if (runs.incrementAndGet() == 1) {
                throw new AssertionError("a class that failed to link, say");
              }
            });
    try {
      await().atMost(Duration.ofSeconds(10)).until(() -> runs.get() >= 3);
    } finally {
      Periodic.stop(timer);
    }
  }
}
