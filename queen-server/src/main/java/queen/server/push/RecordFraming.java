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
   * corrupt record (never answered: its append did not return). Returns false when what follows
   * that record is not a torn tail: bytes other than zeros after it mean a record in the middle of
   * the file was damaged, and the records after it were answered.
   */
  static boolean forEachRecord(Path file, RecordSink sink) throws IOException {
    try (DataInputStream in =
        new DataInputStream(new BufferedInputStream(Files.newInputStream(file), 1 << 16))) {
      while (true) {
        byte[] header = in.readNBytes(HEADER);
        if (header.length < HEADER) {
          return true;
        }
        ByteBuffer h = ByteBuffer.wrap(header);
        int length = h.getInt();
        int checksum = h.getInt();
        // a body starts with its item count; 8 zero bytes (a tail zero-filled by a power loss)
        // have the checksum of an empty body
        if (length < Integer.BYTES || length > MAX_RECORD) {
          return onlyZeros(in);
        }
        byte[] body = in.readNBytes(length);
        if (body.length < length) {
          // torn, unless a whole record lies in what was read: then this length was damaged on
          // disk (after a restart, the count read back had missed the answered records after it)
          return !holdsRecord(body);
        }
        CRC32C crc = new CRC32C();
        crc.update(body);
        if ((int) crc.getValue() != checksum) {
          return onlyZeros(in);
        }
        sink.accept(body);
      }
    }
  }

  /**
   * Whether a whole record, its checksum matching, starts anywhere in {@code bytes}. Few offsets
   * are tried: a length must fit in what follows, and text (a body's JSON) reads as a length past
   * the limit.
   */
  private static boolean holdsRecord(byte[] bytes) {
    ByteBuffer b = ByteBuffer.wrap(bytes);
    for (int at = 0; at + HEADER <= bytes.length; at++) {
      int length = b.getInt(at);
      if (length >= Integer.BYTES && length <= bytes.length - at - HEADER) {
        CRC32C crc = new CRC32C();
        crc.update(bytes, at + HEADER, length);
        if ((int) crc.getValue() == b.getInt(at + Integer.BYTES)) {
          return true;
        }
      }
    }
    return false;
  }

  /** Whether the rest of the stream holds nothing but zeros (a power loss's tail). */
  private static boolean onlyZeros(DataInputStream in) throws IOException {
    byte[] chunk = new byte[1 << 16];
    for (int n = in.read(chunk); n > 0; n = in.read(chunk)) {
      for (int i = 0; i < n; i++) {
        if (chunk[i] != 0) {
          return false;
        }
      }
    }
    return true;
  }
}
