package queen.bench.jmh;

import com.github.luben.zstd.Zstd;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.UUID;
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
import queen.server.codec.Frame;
import queen.server.codec.SegmentCodec;

/**
 * The segment codec on a segment of 100 messages: encode (compressed when the body is 1 KiB or
 * more), decode, and zstd alone on the raw body, so that the cost of compression shows apart.
 * Throughput in segments per second; multiply by the segment's bytes for MB/s.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
@Fork(1)
@Warmup(iterations = 2, time = 2)
@Measurement(iterations = 3, time = 2)
public class CodecBenchmark {
  @Param({"30", "1024", "10240"})
  int payloadBytes;

  List<Frame> frames;
  byte[] blob;
  byte[] rawBody;

  @Setup
  public void setup() {
    frames = new ArrayList<>();
    for (int i = 0; i < 100; i++) {
      byte[] payload = new byte[payloadBytes];
      Arrays.fill(payload, (byte) ('a' + i % 26));
      payload[0] = '"';
      payload[payload.length - 1] = '"';
      frames.add(new Frame(UUID.randomUUID().toString(), null, null, 0, payload));
    }
    blob = SegmentCodec.encode(frames);
    rawBody = new byte[frames.size() * (payloadBytes + 60)];
  }

  @Benchmark
  public byte[] encode() {
    return SegmentCodec.encode(frames);
  }

  @Benchmark
  public List<Frame> decode() {
    return SegmentCodec.decode(blob);
  }

  @Benchmark
  public byte[] zstdOnly() {
    return Zstd.compress(rawBody, 1);
  }
}
