package queen.server.push;

import java.io.BufferedInputStream;
import java.io.DataInputStream;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.zip.CRC32C;

/**
 * How a record of the local buffer lies in its file: {@code [u32 length][u32 CRC-32C][body]}. A
 * record cut short by a crash fails its length or checksum: it was never answered, so reading stops
 * there and the torn tail is dropped.
 */
final class RecordFraming {
  private static final int HEADER = 8;
  static final int MAX_RECORD = 256 << 20;

  private RecordFraming() {}

  /** A record body handed over while a file is read. */
  interface RecordSink {
    void accept(byte[] body) throws IOException;
  }

  /** The record of {@code body}, ready to write. */
  static ByteBuffer frame(byte[] body) {
    CRC32C crc = new CRC32C();
    crc.update(body);
    return ByteBuffer.allocate(HEADER + body.length)
        .putInt(body.length)
        .putInt((int) crc.getValue())
        .put(body)
        .flip();
  }

  /**
   * Streams the whole records of a file, in order, to {@code sink}; reading stops at a torn or
   * corrupt record (never answered: its append did not return).
   */
  static void forEachRecord(Path file, RecordSink sink) throws IOException {
    try (DataInputStream in =
        new DataInputStream(new BufferedInputStream(Files.newInputStream(file), 1 << 16))) {
      while (true) {
        byte[] header = in.readNBytes(HEADER);
        if (header.length < HEADER) {
          return;
        }
        ByteBuffer h = ByteBuffer.wrap(header);
        int length = h.getInt();
        int checksum = h.getInt();
        // a body starts with its item count; 8 zero bytes (a tail zero-filled by a power loss)
        // have the checksum of an empty body
        if (length < Integer.BYTES || length > MAX_RECORD) {
          return;
        }
        byte[] body = in.readNBytes(length);
        CRC32C crc = new CRC32C();
        crc.update(body);
        if (body.length < length || (int) crc.getValue() != checksum) {
          return;
        }
        sink.accept(body);
      }
    }
  }
}
