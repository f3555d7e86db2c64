package queen.bench;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import java.lang.management.GarbageCollectorMXBean;
import java.lang.management.ManagementFactory;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledOnOs;
import org.junit.jupiter.api.condition.OS;
import org.junit.jupiter.api.io.TempDir;

class RssTest {
  private static final long PID = ProcessHandle.current().pid();
  private static final long BLOCK = 64L << 20;

  @Test
  @EnabledOnOs(OS.LINUX)
  void aResetPeakForgetsMemoryGivenBackAndFollowsNewGrowth() throws InterruptedException {
    long before = quiet();
    touchAndFree();
    long raised = Rss.peak(PID);
    assertThat(raised).isGreaterThanOrEqualTo(before + 60);

    long atReset = quiet();
    Rss.resetPeak(PID);
    assertThat(Rss.peak(PID)).isLessThan(raised - 40);

    touchAndFree();
    assertThat(Rss.peak(PID)).isGreaterThanOrEqualTo(atReset + 60);
  }

  @Test
  void aFullCollectionRunsInTheJvmNamed() {
    long before = collections();
    Rss.collect(PID);
    assertThat(collections()).isGreaterThan(before);
    assertThatThrownBy(() -> Rss.collect(Long.MAX_VALUE))
        .isInstanceOf(IllegalStateException.class)
        .hasMessageContaining("GC.run");
  }

  @Test
  void aProcessThatIsGoneHasNoMemory() {
    assertThat(Rss.now(Long.MAX_VALUE)).isNull();
    assertThat(Rss.alive(Long.MAX_VALUE)).isFalse();
  }

  @Test
  void theReportShowsThePeakOrTheReadingAndNoTimesForIdleRows(@TempDir Path out) throws Exception {
    Report.append(out, result("push", 10, Result.params(Report.RSS_PEAK, 171L)));
    Report.append(out, result("idle", 0, Result.params(Report.RSS_NOW, 96L)));
    Report.append(out, result("parked", 10, Result.params(Report.RSS_NOW, 230L)));
    Report.render(out, Map.of());

    List<String> rows =
        Files.readAllLines(out.resolve("results.md")).stream()
            .filter(
                l -> l.startsWith("| push") || l.startsWith("| idle") || l.startsWith("| parked"))
            .toList();
    assertThat(rows).hasSize(3);
    assertThat(rows.get(0)).contains("| 171 MB |").doesNotContain(Report.RSS_PEAK);
    assertThat(rows.get(1)).startsWith("| idle | broker |  |  |  |  | 96 MB |");
    assertThat(rows.get(2)).contains("| 230 MB |").doesNotContain(Report.RSS_NOW);
  }

  /**
   * 64 MB of native memory written page by page, then given back to the system: a direct buffer is
   * freed once a collection finds it unreachable.
   */
  private static void touchAndFree() throws InterruptedException {
    long before = quiet();
    ByteBuffer block = ByteBuffer.allocateDirect((int) BLOCK);
    for (int i = 0; i < block.capacity(); i += 4096) {
      block.put(i, (byte) 1);
    }
    assertThat(Rss.now(PID)).isGreaterThanOrEqualTo(before + 60);
    block = null;
    await()
        .atMost(20, TimeUnit.SECONDS)
        .until(
            () -> {
              System.gc();
              return Rss.now(PID) < before + 20;
            });
  }

  private static long collections() {
    return ManagementFactory.getGarbageCollectorMXBeans().stream()
        .mapToLong(GarbageCollectorMXBean::getCollectionCount)
        .sum();
  }

  /** This JVM's memory once a collection has run and G1 has given back what it shrank. */
  private static long quiet() throws InterruptedException {
    System.gc();
    Rss.settle(PID);
    return Rss.now(PID);
  }

  private static Result result(String scenario, long requests, Map<String, Object> extra) {
    return new Result(scenario, "broker", Map.of(), 5, requests, 2, requests, 1, 1, 1, 0, extra);
  }
}
