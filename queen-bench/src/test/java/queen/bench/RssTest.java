package queen.bench;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class RssTest {
  private static final long PID = ProcessHandle.current().pid();

  @Test
  void aResetPeakStartsAtTheCurrentMemoryAndFollowsItUp() {
    Rss.resetPeak(PID);
    long before = Rss.now(PID);
    assertThat(Rss.peak(PID)).isBetween(before - 8, before + 8);

    ByteBuffer held = ByteBuffer.allocateDirect(64 << 20);
    for (int i = 0; i < held.capacity(); i += 4096) {
      held.put(i, (byte) 1);
    }
    assertThat(Rss.peak(PID)).isGreaterThanOrEqualTo(before + 60);
    assertThat(held.get(0)).isEqualTo((byte) 1);
  }

  @Test
  void aProcessThatIsGoneHasNoMemory() {
    assertThat(Rss.now(Long.MAX_VALUE)).isNull();
  }

  @Test
  void theReportShowsThePeakInItsColumnAndTheIdleReadingWhereThereIsNoPeak(@TempDir Path out)
      throws Exception {
    Report.append(out, result("push", Result.params(Report.RSS_PEAK, 171L)));
    Report.append(out, result("idle", Result.params(Report.RSS_NOW, 96L)));
    Report.append(
        out, result("parked", Result.params(Report.RSS_PEAK, 420L, Report.RSS_NOW, 230L)));
    Report.render(out, java.util.Map.of());

    List<String> rows =
        Files.readAllLines(out.resolve("results.md")).stream()
            .filter(
                l -> l.startsWith("| push") || l.startsWith("| idle") || l.startsWith("| parked"))
            .toList();
    assertThat(rows).hasSize(3);
    assertThat(rows.get(0)).contains("| 171 MB |").doesNotContain(Report.RSS_PEAK);
    assertThat(rows.get(1)).contains("| 96 MB |").doesNotContain(Report.RSS_NOW);
    assertThat(rows.get(2)).contains("| 420 MB |").contains(Report.RSS_NOW + "=230");
  }

  private static Result result(String scenario, java.util.Map<String, Object> extra) {
    return new Result(scenario, "broker", java.util.Map.of(), 5, 10, 2, 1, 1, 1, 1, 0, extra);
  }
}
