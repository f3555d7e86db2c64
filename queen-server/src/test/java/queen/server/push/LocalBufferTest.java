package queen.server.push;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.io.RandomAccessFile;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.UUID;
import org.junit.jupiter.api.Test;

/** The buffer's file log on its own: records survive a reopen, a torn tail is dropped. */
class LocalBufferTest {
  private static final PayloadSealing CLEAR = new PayloadSealing(null);

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
    LocalBuffer.forEachRecord(file, out::add);
    return out;
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
    Path file;
    try (var s = Files.list(dir)) {
      file = s.filter(p -> p.toString().endsWith(".log")).findFirst().orElseThrow();
    }
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
  void aCorruptedRecordEndsTheFileAndOneDirectoryHasOneOwner() throws IOException {
    Path dir = Files.createTempDirectory("queen-buffer-crc");
    try (LocalBuffer b = LocalBuffer.open(dir, 1 << 20)) {
      b.append(record("a"), 1);
      b.append(record("b"), 1);
      assertThatThrownBy(() -> LocalBuffer.open(dir, 1 << 20))
          .isInstanceOf(IOException.class)
          .hasMessageContaining("in use by another broker");
    }
    Path file;
    try (var s = Files.list(dir)) {
      file = s.filter(p -> p.toString().endsWith(".log")).findFirst().orElseThrow();
    }
    byte[] bytes = Files.readAllBytes(file);
    bytes[bytes.length - 3] ^= 0x40; // a flipped bit inside the second record's body
    Files.write(file, bytes);
    assertThat(records(file)).hasSize(1);
  }
}
