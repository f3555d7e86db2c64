package queen.server.pop;

import java.util.List;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.Warmup;
import queen.server.store.Verdict;

/**
 * The hot-list's cycle per pop: a push marks a partition, a pop takes candidates, the verdict is
 * checked back. Lives in the ring's package because the ring is internal to the broker.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
@Fork(1)
@Warmup(iterations = 2, time = 2)
@Measurement(iterations = 3, time = 2)
public class HotListBenchmark {
  @Param({"100", "10000"})
  int partitions;

  HotList ring;
  String[] names;
  int next;

  @Setup
  public void setup() {
    ring = new HotList();
    names = new String[partitions];
    for (int i = 0; i < partitions; i++) {
      names[i] = "p" + i;
      ring.add(names[i], 1, 0, 0);
    }
  }

  @Benchmark
  public int pushTakeCheckIn() {
    String p = names[next++ % partitions];
    ring.add(p, 10, 0, 0);
    List<HotList.Taken> taken = ring.take(16, 1);
    HotList.Taken t = taken.getFirst();
    ring.checkIn(t.partition(), t.version(), t.exclusive(), Verdict.DELIVERED, true, 0, 0);
    return taken.size();
  }
}
