package queen.server.push;

import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A buffer file being appended to and what is known of it on disk. Once a force of it failed or was
 * cut short (an interrupt closes the channel unforced), nothing of it that was not yet confirmed
 * counts: a later fsync may report success for pages the failed one lost.
 */
final class BufferFile {
  private static final Logger log = LoggerFactory.getLogger(BufferFile.class);

  final FileChannel channel;
  final Path path;

  /** Bytes a successful force covered. */
  volatile long forcedTo;

  /** Closed for appends after a force of everything written to it. */
  volatile boolean closedForced;

  volatile boolean failed;

  BufferFile(FileChannel channel, Path path) {
    this.channel = channel;
    this.path = path;
  }

  /**
   * Closes the file and cuts it back to what a force confirmed, so that no record whose push was
   * refused is ever drained (best effort: if the cut fails too, such a record may be stored once,
   * like a retried push). Answers the bytes cut.
   */
  long cutBack() {
    try {
      channel.close();
    } catch (IOException e) {
      // closing a file we stop using
    }
    try (FileChannel cut = FileChannel.open(path, StandardOpenOption.WRITE)) {
      long before = cut.size();
      if (before > forcedTo) {
        cut.truncate(forcedTo);
        cut.force(true);
        return before - forcedTo;
      }
    } catch (IOException e) {
      log.warn(
          "buffer file {} could not be cut back after a failed write: {}", path, e.getMessage());
    }
    return 0;
  }
}
