package queen.server.push;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.io.RandomAccessFile;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.locks.LockSupport;
import org.junit.jupiter.api.Test;

/** The buffer's file log on its own: records survive a reopen, a torn tail is dropped. */
class LocalBufferTest {
  private static final PayloadSealing CLEAR = new PayloadSealing(null, id -> {});

  private static byte[] record(String txn) {
    return BufferRecord.encode(
        List.of(
            new PushItem(
                "q",
                "p",
                "{\"t\":\"x\"}".getBytes(StandardCharsets.UTF_8),
                txn,
                UUID.randomUUID(),
                "sub")),
        CLEAR);
  }

  private static List<byte[]> records(Path file) throws IOException {
    List<byte[]> out = new java.util.ArrayList<>();
    RecordFraming.forEachRecord(file, out::add);
    return out;
  }

  /** Appends one record per transactionId to {@code b} (open on {@code dir}), seals, the file. */
  private static Path sealed(LocalBuffer b, Path dir, String... txns) throws IOException {
    for (String txn : txns) {
      b.append(record(txn), 1);
    }
    b.seal();
    return firstLog(dir);
  }

  /** A buffer file of one record per transactionId, in a new directory, its buffer closed. */
  private static Path written(String dirPrefix, String... txns) throws IOException {
    Path dir = Files.createTempDirectory(dirPrefix);
    try (LocalBuffer b = LocalBuffer.open(dir, 1 << 20)) {
      for (String txn : txns) {
        b.append(record(txn), 1);
      }
    }
    return firstLog(dir);
  }

  private static Path firstLog(Path dir) throws IOException {
    try (var s = Files.list(dir)) {
      return s.filter(p -> p.toString().endsWith(".log")).findFirst().orElseThrow();
    }
  }

  @Test
  void aRecordOverTheLimitADrainReadsIsRefusedAndTheRecordsAroundItKept() throws IOException {
    Path dir = Files.createTempDirectory("queen-buffer-huge");
    try (LocalBuffer b = LocalBuffer.open(dir, 1L << 30)) {
      b.append(record("before"), 1);
      assertThatThrownBy(() -> b.append(new byte[RecordFraming.MAX_RECORD + 1], 1))
          .isInstanceOf(IOException.class)
          .hasMessageContaining("over a buffer record's limit");
      b.append(record("after"), 1);
      assertThat(b.failedWrites()).isEqualTo(1);
      assertThat(b.pending()).isEqualTo(2);
    }
    assertThat(records(firstLog(dir))).hasSize(2);
  }

  @Test
  void aTornLastRecordIsDroppedAndTheWholeOnesBeforeItKept() throws IOException {
    Path dir = Files.createTempDirectory("queen-buffer-torn");
    try (LocalBuffer b = LocalBuffer.open(dir, 1 << 20)) {
      b.append(record("a"), 1);
      b.append(record("b"), 1);
      b.append(record("c"), 1);
      assertThat(b.pending()).isEqualTo(3);
    }
    Path file = firstLog(dir);
    try (RandomAccessFile f = new RandomAccessFile(file.toFile(), "rw")) {
      f.setLength(f.length() - 5); // the crash cut the last record short
    }
    try (LocalBuffer b = LocalBuffer.open(dir, 1 << 20)) {
      assertThat(b.pending()).isEqualTo(2);
      List<byte[]> records = records(file);
      assertThat(records).hasSize(2);
      List<PushItem> first = BufferRecord.decode(records.get(0), CLEAR);
      assertThat(first.get(0).transactionId()).isEqualTo("a");
      assertThat(new String(first.get(0).payload(), StandardCharsets.UTF_8))
          .isEqualTo("{\"t\":\"x\"}");
      assertThat(first.get(0).producerSub()).isEqualTo("sub");
    }
  }

  @Test
  void aZeroFilledTailIsNoRecord() throws IOException {
    Path file = written("queen-buffer-zeros", "a", "b");
    Path dir = file.getParent();
    // a power loss can leave the file's last pages allocated and zero-filled
    Files.write(file, new byte[4096], java.nio.file.StandardOpenOption.APPEND);
    assertThat(records(file)).as("8 zero bytes are no empty record").hasSize(2);
    try (LocalBuffer b = LocalBuffer.open(dir, 1 << 20)) {
      assertThat(b.pending()).isEqualTo(2);
    }
  }

  @Test
  void anOpenThatFailsLeavesTheDirectoryFreeForTheNextOne() throws IOException {
    Path dir = Files.createTempDirectory("queen-buffer-unreadable");
    Path notAFile = Files.createDirectory(BufferFiles.file(dir, 1));
    assertThatThrownBy(() -> LocalBuffer.open(dir, 1 << 20))
        .isInstanceOf(IOException.class)
        .hasMessageNotContaining("in use by another broker");
    Files.delete(notAFile);
    try (LocalBuffer b = LocalBuffer.open(dir, 1 << 20)) {
      assertThat(b.pending()).isZero();
    }
  }

  @Test
  void anAppendAfterCloseIsRefusedAndWritesNothing() throws IOException {
    Path dir = Files.createTempDirectory("queen-buffer-closed");
    LocalBuffer b = LocalBuffer.open(dir, 1 << 20);
    b.append(record("before"), 1);
    b.close();
    // a push still running past the shutdown timeout: the directory's lock is already released
    assertThatThrownBy(() -> b.append(record("after"), 1))
        .isInstanceOf(IOException.class)
        .hasMessageContaining("closed");
    assertThat(records(firstLog(dir))).hasSize(1);
  }

  @Test
  void aFileNumberTakenMeanwhileIsPassedOverAndTheFileAdopted() throws IOException {
    Path dir = Files.createTempDirectory("queen-buffer-taken");
    Path earlier = written("queen-buffer-taken-src", "renamed-back");
    try (LocalBuffer b = LocalBuffer.open(dir, 1 << 20)) {
      // a file set aside and renamed back by hand after the open, under the next number
      Files.copy(earlier, BufferFiles.file(dir, 1));
      b.append(record("new"), 1); // failed for every append before, the number never advanced
      b.seal();
      assertThat(b.adoptSealed()).as("the renamed file adopted").isEqualTo(1);
      assertThat(b.sealedFiles()).hasSize(2);
      assertThat(b.pending()).isEqualTo(2);
    }
  }

  @Test
  void aCorruptedRecordEndsTheFileAndOneDirectoryHasOneOwner() throws IOException {
    Path dir = Files.createTempDirectory("queen-buffer-crc");
    try (LocalBuffer b = LocalBuffer.open(dir, 1 << 20)) {
      b.append(record("a"), 1);
      b.append(record("b"), 1);
      assertThatThrownBy(() -> LocalBuffer.open(dir, 1 << 20))
          .isInstanceOf(IOException.class)
          .hasMessageContaining("in use by another broker");
    }
    Path file = firstLog(dir);
    byte[] bytes = Files.readAllBytes(file);
    bytes[bytes.length - 3] ^= 0x40; // a flipped bit inside the second record's body
    Files.write(file, bytes);
    assertThat(records(file)).hasSize(1);
    assertThat(RecordFraming.forEachRecord(file, r -> {}))
        .as("the damaged record was the last")
        .isTrue();
  }

  @Test
  void aRecordDamagedBeforeOthersIsToldFromATornTail() throws IOException {
    Path file = written("queen-buffer-middle", "a", "b", "c");
    byte[] bytes = Files.readAllBytes(file);
    bytes[bytes.length / 2] ^= 0x40; // inside the second record's body
    Files.write(file, bytes);
    List<byte[]> read = new java.util.ArrayList<>();
    assertThat(RecordFraming.forEachRecord(file, read::add))
        .as("answered records follow the damage")
        .isFalse();
    assertThat(read).hasSize(1);
  }

  @Test
  void aFileDamagedInTheMiddleLeavesNothingPendingOnceSetAside() throws IOException {
    Path dir = Files.createTempDirectory("queen-buffer-damaged-count");
    try (LocalBuffer b = LocalBuffer.open(dir, 1 << 20)) {
      Path file = sealed(b, dir, "a", "b", "c");
      byte[] bytes = Files.readAllBytes(file);
      bytes[bytes.length / 2] ^= 0x40; // inside the second record's body
      Files.write(file, bytes);
      // what the drain does: store what reads, set the file aside at the damage
      List<byte[]> read = new ArrayList<>();
      assertThat(RecordFraming.forEachRecord(file, read::add)).isFalse();
      b.stored(read.size());
      b.setAsideDamaged(file, read.size());
      // the two records past the damage were counted when appended: pending stayed at 2, and
      // every later push queued behind a drain with nothing to drain
      assertThat(b.pending()).isZero();
    }
  }

  /** Makes the second record of a file of several a MiB longer, past the end of the file. */
  private static byte[] damageSecondLength(Path file) throws IOException {
    byte[] bytes = Files.readAllBytes(file);
    int second = 8 + ByteBuffer.wrap(bytes, 0, 4).getInt();
    bytes[second + 1] ^= 0x10;
    Files.write(file, bytes);
    return bytes;
  }

  @Test
  void aLengthDamagedPastTheEndIsToldFromATornTailAndTheFileSetAsideNotDeleted()
      throws IOException {
    Path dir = Files.createTempDirectory("queen-buffer-length");
    try (LocalBuffer b = LocalBuffer.open(dir, 1 << 20)) {
      Path file = sealed(b, dir, "a", "b", "c");
      byte[] bytes = damageSecondLength(file);
      List<byte[]> read = new ArrayList<>();
      assertThat(RecordFraming.forEachRecord(file, read::add))
          .as("whole records lie in what the long length took in")
          .isFalse();
      assertThat(read).hasSize(1);
      b.stored(read.size());
      // deleted, the two answered records after it were lost without a word, and pending stayed
      // at 2: every later push queued behind a drain with nothing to drain
      assertThat(b.drained(file, read.size())).isFalse();
      assertThat(file).doesNotExist();
      assertThat(BufferFiles.setAsideName(file)).hasSize(bytes.length);
      assertThat(b.pending()).isZero();
    }
  }

  // counted again after a restart, the file held as many messages as it read: the drain took the
  // damage for a torn tail and deleted the two answered records after it
  @Test
  void aLengthDamagedBeforeARestartIsStillToldFromATornTail() throws IOException {
    Path file = written("queen-buffer-length-restart", "a", "b", "c");
    damageSecondLength(file);
    try (LocalBuffer b = LocalBuffer.open(file.getParent(), 1 << 20)) {
      assertThat(b.pending()).as("read back: the record before the damage").isEqualTo(1);
      assertThat(RecordFraming.forEachRecord(file, r -> {})).isFalse();
    }
    byte[] torn = Files.readAllBytes(written("queen-buffer-torn", "a", "b"));
    Path tail = Files.createTempFile("queen-buffer-torn-tail", ".log");
    Files.write(tail, Arrays.copyOf(torn, torn.length - 3));
    assertThat(RecordFraming.forEachRecord(tail, r -> {})).as("a real torn tail").isTrue();
  }

  // a drain still running past the close's wait deleted a file the next broker had counted: its
  // pending count never came back to 0, and every push on it was buffered until its restart
  @Test
  void aDrainEndingAfterTheCloseLeavesItsFileToTheNextBroker() throws IOException {
    Path dir = Files.createTempDirectory("queen-buffer-closed-drain");
    LocalBuffer b = LocalBuffer.open(dir, 1 << 20);
    Path file = sealed(b, dir, "a");
    b.close();
    assertThatThrownBy(() -> b.drained(file, 1)).isInstanceOf(IOException.class);
    assertThat(file).exists();
    try (LocalBuffer next = LocalBuffer.open(dir, 1 << 20)) {
      assertThat(next.pending()).isEqualTo(1);
    }
  }

  @Test
  void appendsRacingTheDrainAreEachDrainedOnceNeverDeadlockAndLeaveNothingPending()
      throws Exception {
    Path dir = Files.createTempDirectory("queen-buffer-race");
    int threads = 16;
    int each = 300;
    // daemon threads, stopped without waiting: a deadlock fails the test instead of hanging it
    ExecutorService pool =
        Executors.newFixedThreadPool(threads + 1, Thread.ofPlatform().daemon().factory());
    LocalBuffer b = LocalBuffer.open(dir, 1L << 30);
    Map<String, Integer> seen = new ConcurrentHashMap<>();
    try {
      AtomicBoolean appending = new AtomicBoolean(true);
      // the drainer seals the file being written and drains it as often as it can, as it does
      // while pushes queue behind a drain
      Future<Integer> drainer =
          pool.submit(
              () -> {
                int seals = 0;
                while (appending.get()) {
                  drainAll(b, seen);
                  seals++;
                  // paced, not synchronising: a few hundred files, not thousands, per run
                  LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(2));
                }
                return seals;
              });
      List<Future<?>> writers = new ArrayList<>();
      for (int t = 0; t < threads; t++) {
        int thread = t;
        writers.add(
            pool.submit(
                () -> {
                  for (int i = 0; i < each; i++) {
                    b.append(record(thread + "-" + i), 1);
                  }
                  return null;
                }));
      }
      for (Future<?> w : writers) {
        w.get(60, TimeUnit.SECONDS);
      }
      appending.set(false);
      assertThat(drainer.get(60, TimeUnit.SECONDS)).isPositive();
      drainAll(b, seen);
      assertThat(b.failedWrites()).isZero();
      assertThat(seen).hasSize(threads * each);
      assertThat(seen.values()).allMatch(n -> n == 1);
      // a record drained before its append had counted it once left a phantom pending forever,
      // and every later push queued behind a drain with nothing to drain
      assertThat(b.pending()).isZero();
      b.close(); // not in a finally: after a deadlock it would wait forever
    } finally {
      pool.shutdownNow();
    }
  }

  /** What the broker's drainer does with a buffer: seal, read, count as stored, delete. */
  private static void drainAll(LocalBuffer b, Map<String, Integer> seen) throws IOException {
    b.seal();
    for (Path f : b.sealedFiles()) {
      List<byte[]> rs = records(f);
      for (byte[] r : rs) {
        seen.merge(BufferRecord.decode(r, CLEAR).get(0).transactionId(), 1, Integer::sum);
      }
      b.stored(rs.size());
      assertThat(b.drained(f, rs.size())).isTrue();
    }
  }
}
