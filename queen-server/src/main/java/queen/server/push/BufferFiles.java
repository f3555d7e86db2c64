package queen.server.push;

import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.stream.Stream;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The names of the local buffer's files in its directory: {@code buffer-<20-digit number>.log},
 * numbered in the order they were opened, and {@code <that name>.failed} for a file set aside; and
 * the directory's sync.
 */
final class BufferFiles {
  private static final Logger log = LoggerFactory.getLogger(BufferFiles.class);

  /** Whether a directory that cannot be synced was warned about (once per process). */
  private static final AtomicBoolean UNSYNCED_WARNED = new AtomicBoolean();

  private static final String PREFIX = "buffer-";
  private static final String SUFFIX = ".log";
  private static final String FAILED = ".failed";

  private BufferFiles() {}

  /** The file numbered {@code sequence}. */
  static Path file(Path dir, long sequence) {
    return dir.resolve(String.format("%s%020d%s", PREFIX, sequence, SUFFIX));
  }

  /** The number of a buffer file, set aside or not. */
  static long sequence(Path p) {
    String n = p.getFileName().toString();
    if (n.endsWith(FAILED)) {
      n = n.substring(0, n.length() - FAILED.length());
    }
    return Long.parseLong(n.substring(PREFIX.length(), n.length() - SUFFIX.length()));
  }

  /** Where {@code file} goes when it is set aside. */
  static Path setAsideName(Path file) {
    return file.resolveSibling(file.getFileName() + FAILED);
  }

  /** The buffer files numbered below {@code below}, oldest first. */
  static List<Path> below(Path dir, long below) throws IOException {
    try (Stream<Path> s = Files.list(dir)) {
      return s.filter(p -> p.getFileName().toString().matches("buffer-\\d{20}\\.log"))
          .filter(p -> sequence(p) < below)
          .sorted(Comparator.comparingLong(BufferFiles::sequence))
          .toList();
    }
  }

  /** The files set aside. */
  static List<Path> setAside(Path dir) throws IOException {
    try (Stream<Path> s = Files.list(dir)) {
      return s.filter(p -> p.getFileName().toString().matches("buffer-\\d{20}\\.log\\.failed"))
          .toList();
    }
  }

  /** How many files are set aside, and their bytes. */
  static long[] setAsideSizes(Path dir) throws IOException {
    long count = 0;
    long bytes = 0;
    for (Path p : setAside(dir)) {
      count++;
      bytes += Files.size(p);
    }
    return new long[] {count, bytes};
  }

  /** The messages of a buffer file's whole records. */
  static long messagesIn(Path file) throws IOException {
    long[] messages = new long[1];
    RecordFraming.forEachRecord(file, r -> messages[0] += BufferRecord.count(r));
    return messages[0];
  }

  /**
   * Forces the directory's entries to disk (POSIX: a new file's name is not durable before). A file
   * system that cannot (some FUSE mounts, Windows) is logged, not refused: the buffer worked there
   * before, as PostgreSQL's own directory syncs do on such systems.
   */
  static void forceDirectory(Path dir) {
    try (FileChannel d = FileChannel.open(dir, StandardOpenOption.READ)) {
      d.force(true);
    } catch (IOException e) {
      // once: a new file comes at every drain pass of an outage
      if (UNSYNCED_WARNED.compareAndSet(false, true)) {
        log.warn(
            "FILE_BUFFER_DIR {} cannot be synced to disk ({}): a new buffer file's name may not"
                + " survive a power loss",
            dir,
            e.getMessage());
      }
    }
  }

  /** Whether the directory holds buffer files to drain; false when it cannot be listed. */
  static boolean any(Path dir) {
    try {
      return !below(dir, Long.MAX_VALUE).isEmpty();
    } catch (IOException | RuntimeException e) {
      return false;
    }
  }
}
