package queen.server.push;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.ClosedChannelException;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.channels.OverlappingFileLockException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.ReentrantLock;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The durable local buffer of pushes that cannot or may not go to PostgreSQL now: an append-only
 * log of files {@code buffer-<sequence>.log} in one directory that one broker owns (a lock file
 * keeps a second broker out). A record ({@link RecordFraming}) is written and fsynced before its
 * push is answered, concurrent appends sharing one fsync. Appends go to a fresh file after every
 * start and every {@link #seal()}; sealed files are drained oldest first and deleted once drained.
 */
public final class LocalBuffer implements AutoCloseable {
  private static final Logger log = LoggerFactory.getLogger(LocalBuffer.class);

  /** A file is sealed for draining past this size, so a drain reads and deletes in steps. */
  private static final long ROTATE_BYTES = 16 << 20;

  private final Path dir;
  private final long maxBytes;
  private final ReentrantLock appendLock = new ReentrantLock();
  private final ReentrantLock syncLock = new ReentrantLock();
  private final AtomicLong pending = new AtomicLong();
  private final AtomicLong failedWrites = new AtomicLong();
  private final FileChannel lockChannel;
  private final FileLock lock;
  private BufferFile current;
  private long currentSequence;
  // the files whose messages are counted in pending, with how many: a file renamed back from
  // .failed is not, and a drain of it would have taken its messages off the count of others
  private final Map<Long, Long> counted = new ConcurrentHashMap<>();
  private long written;
  private long bytesOnDisk;
  private boolean closed;

  /** The last append: the file and how far it is written (for a shared fsync's reach). */
  private volatile Written tail = new Written(null, 0);

  private LocalBuffer(Path dir, long maxBytes, FileChannel lockChannel, FileLock lock) {
    this.dir = dir;
    this.maxBytes = maxBytes;
    this.lockChannel = lockChannel;
    this.lock = lock;
  }

  /**
   * Opens the buffer in {@code dir} (created if missing), counting what earlier runs left to drain.
   * Fails when the directory cannot be used or another broker holds it.
   */
  public static LocalBuffer open(Path dir, long maxBytes) throws IOException {
    Files.createDirectories(dir);
    FileChannel lockChannel =
        FileChannel.open(dir.resolve(".lock"), StandardOpenOption.CREATE, StandardOpenOption.WRITE);
    FileLock lock;
    try {
      lock = lockChannel.tryLock();
    } catch (OverlappingFileLockException e) {
      lock = null;
    } catch (IOException | RuntimeException e) {
      lockChannel.close(); // a file system without locks: every retry leaked a descriptor
      throw e;
    }
    if (lock == null) {
      lockChannel.close();
      throw new BufferInUse(dir);
    }
    LocalBuffer b = new LocalBuffer(dir, maxBytes, lockChannel, lock);
    try {
      long last = 0;
      for (Path f : BufferFiles.below(dir, Long.MAX_VALUE)) {
        last = Math.max(last, BufferFiles.sequence(f));
        long messages = BufferFiles.messagesIn(f);
        b.counted.put(BufferFiles.sequence(f), messages);
        b.bytesOnDisk += Files.size(f);
        b.pending.addAndGet(messages);
      }
      // numbers of files set aside are not reused: renamed back, one would land on a newer file
      for (Path f : BufferFiles.setAside(dir)) {
        last = Math.max(last, BufferFiles.sequence(f));
      }
      b.currentSequence = last + 1;
    } catch (IOException | RuntimeException e) {
      // the lock goes with the failed open: kept, every retry of it found the directory "in use"
      lockChannel.close();
      throw e;
    }
    return b;
  }

  /** Messages written and not yet drained. */
  public long pending() {
    // never below 0: a refused record that a failed cut left in its file is drained too
    return Math.max(0, pending.get());
  }

  /** Appends that could not be written (full disk, I/O error, over the size budget). */
  public long failedWrites() {
    return failedWrites.get();
  }

  /**
   * Appends one record of {@code messages} messages and returns once it is on disk; an {@link
   * IOException} means it was not written and must not be answered as buffered.
   */
  public void append(byte[] body, int messages) throws IOException {
    if (body.length > RecordFraming.MAX_RECORD) {
      // a drain stops reading a file at a record this long, and the file's rest was lost
      failedWrites.incrementAndGet();
      throw new IOException("a push of " + body.length + " bytes is over a buffer record's limit");
    }
    ByteBuffer record = RecordFraming.frame(body);
    int size = record.remaining();
    Written mine;
    appendLock.lock();
    try {
      if (closed) {
        // a push past the shutdown timeout: the lock is gone, another broker may own the files
        throw new IOException("the buffer is closed");
      }
      if (bytesOnDisk + size > maxBytes) {
        failedWrites.incrementAndGet();
        throw new IOException(
            "the buffer is full (QUEEN_BUFFER_MAX_MB allows " + maxBytes + " bytes)");
      }
      try {
        if (current != null && written + size > ROTATE_BYTES) {
          closeCurrent();
        }
        if (current == null) {
          // a number taken by a file nobody counted (renamed back by hand) is passed over: the
          // file is adopted as sealed, and an append that kept failing on it buffered nothing
          while (Files.exists(BufferFiles.file(dir, currentSequence))) {
            currentSequence++;
          }
          counted.put(currentSequence, 0L);
          Path path = BufferFiles.file(dir, currentSequence);
          current =
              new BufferFile(
                  FileChannel.open(path, StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE),
                  path);
          // the file's name survives a power loss only once its directory is forced too
          BufferFiles.forceDirectory(dir);
        }
        while (record.hasRemaining()) {
          written += current.channel.write(record, written);
        }
      } catch (IOException e) {
        failedWrites.incrementAndGet();
        if (current != null) {
          fail(current); // the partial record, and anything not yet forced, goes
        }
        throw e;
      }
      bytesOnDisk += size;
      // counted before a seal can hand the record to a drain: counted after the fsync, a drain
      // could store it first and leave it pending for ever
      pending.addAndGet(messages);
      counted.merge(currentSequence, (long) messages, Long::sum);
      mine = new Written(current, written);
      tail = mine;
    } finally {
      appendLock.unlock();
    }
    try {
      sync(mine);
    } catch (IOException e) {
      pending.addAndGet(-messages); // cut back with the rest of its file: never drained
      counted.computeIfPresent(BufferFiles.sequence(mine.file().path), (k, n) -> n - messages);
      throw e;
    }
  }

  /** A file and how far it was written, as one append left it. */
  private record Written(BufferFile file, long end) {}

  /**
   * Forces the file of {@code mine} up to at least its end; one fsync covers every append to that
   * file that finished before it. Appends go on during an fsync; the sync lock is taken before the
   * append lock (when a force fails), never after it.
   */
  private void sync(Written mine) throws IOException {
    BufferFile f = mine.file();
    syncLock.lock();
    try {
      if (f.forcedTo >= mine.end()) {
        return; // a force covered it before anything failed: it stays (a cut keeps it)
      }
      Written upTo = tail;
      long reach = upTo.file() == f ? upTo.end() : mine.end();
      IOException problem = null;
      try {
        if (!f.failed) {
          f.channel.force(false);
        }
      } catch (IOException e) {
        problem = e; // ClosedChannelException too: closed by an interrupt, or by a closer below
      }
      if (problem == null) {
        // checked and set under the append lock, which a failing append cuts the file under:
        // set after such a cut, forcedTo confirmed a record the cut had removed
        appendLock.lock();
        try {
          if (!f.failed) {
            f.forcedTo = Math.max(f.forcedTo, reach);
            return;
          }
        } finally {
          appendLock.unlock();
        }
      }
      if (problem instanceof ClosedChannelException && f.closedForced) {
        return; // closed after a force of everything in it
      }
      failedWrites.incrementAndGet();
      appendLock.lock();
      try {
        fail(f);
      } finally {
        appendLock.unlock();
      }
      throw new IOException(
          "the buffer file could not be forced to disk"
              + (problem == null ? "" : ": " + problem.getMessage()),
          problem);
    } finally {
      syncLock.unlock();
    }
  }

  /**
   * Gives up a file whose write or force failed: appends stop going to it, and it is cut back to
   * what a force confirmed ({@link BufferFile#cutBack}). Under the append lock.
   */
  private void fail(BufferFile f) {
    f.failed = true;
    if (current == f) {
      current = null;
      currentSequence++;
      written = 0;
    }
    bytesOnDisk -= f.cutBack();
  }

  /** Forces and closes the file being appended to; the next append starts the next one. */
  private void closeCurrent() throws IOException {
    BufferFile closing = current;
    try {
      closing.channel.force(false);
    } catch (IOException e) {
      fail(closing);
      throw e;
    }
    // everything in it is on disk: a force of it failing later must not cut it back
    closing.forcedTo = written;
    closing.closedForced = true;
    current = null;
    currentSequence++;
    written = 0;
    closing.channel.close();
  }

  /**
   * Closes the file being appended to, so that it can be drained; later appends start a new one.
   */
  public void seal() throws IOException {
    appendLock.lock();
    try {
      if (current != null) {
        closeCurrent();
      }
    } finally {
      appendLock.unlock();
    }
  }

  /**
   * The files closed for appends, oldest first: those numbered below the file being (or about to
   * be) appended to. Not "every file but the open one": an append may open the next file between
   * that question and the listing, and a drain that took that file as sealed deleted records
   * appended to it after it was read.
   */
  public List<Path> sealedFiles() throws IOException {
    long next;
    appendLock.lock();
    try {
      next = currentSequence;
    } finally {
      appendLock.unlock();
    }
    return BufferFiles.below(dir, next);
  }

  /**
   * Counts the sealed files found that nothing counted: a file set aside that the operator renamed
   * back once its cause was fixed. Without this nothing drained it before the next buffered push or
   * a restart. Called by the drainer alone; returns the messages taken on.
   */
  public long adoptSealed() throws IOException {
    long messages = 0;
    long bytes = 0;
    Map<Long, Long> adopted = new HashMap<>();
    for (Path f : sealedFiles()) {
      if (counted.containsKey(BufferFiles.sequence(f))) {
        continue;
      }
      long n = BufferFiles.messagesIn(f);
      messages += n;
      bytes += Files.size(f);
      adopted.put(BufferFiles.sequence(f), n);
    }
    if (adopted.isEmpty()) {
      return 0;
    }
    appendLock.lock();
    try {
      counted.putAll(adopted);
      bytesOnDisk += bytes;
      pending.addAndGet(messages);
    } finally {
      appendLock.unlock();
    }
    return messages;
  }

  /** Whether the file's messages are counted as pending: only such a file may be drained. */
  public boolean counted(Path file) {
    return counted.containsKey(BufferFiles.sequence(file));
  }

  /** Messages of a sealed file stored in the database: no longer pending. */
  public void stored(long messages) {
    pending.addAndGet(-messages);
  }

  /**
   * A sealed file read to its end, {@code stored} messages stored: deleted, or set aside as damaged
   * when it held fewer than it was counted with (a length damaged on disk reads as a torn tail, and
   * the records after it were answered {@code buffered}). Whether it was deleted.
   */
  public boolean drained(Path file, long stored) throws IOException {
    Long messages = counted.get(BufferFiles.sequence(file));
    if (messages != null && messages > stored) {
      setAsideDamaged(file, stored);
      return false;
    }
    retire(file, null);
    return true;
  }

  /**
   * Sets a sealed file aside as {@code <name>.failed} (kept for the operator, no longer drained)
   * and answers how many messages it was counted with.
   */
  public long quarantine(Path file) throws IOException {
    Long counted = this.counted.get(BufferFiles.sequence(file));
    long messages = counted == null ? BufferFiles.messagesIn(file) : counted;
    setAside(file);
    return messages;
  }

  /**
   * Sets aside a file damaged after its first {@code stored} messages, which were drained: the
   * messages counted for it past those leave the pending count (read back from the damaged file,
   * the count missed the records after the damage, and pending never came back to 0).
   */
  void setAsideDamaged(Path file, long stored) throws IOException {
    Long counted = this.counted.get(BufferFiles.sequence(file));
    setAside(file);
    if (counted != null && counted > stored) {
      pending.addAndGet(stored - counted);
    }
  }

  private void setAside(Path file) throws IOException {
    // off the budget: the operator deletes it or renames it back
    retire(file, BufferFiles.setAsideName(file));
  }

  /**
   * Deletes a sealed file ({@code movedTo} null) or moves it out of the drain, under the append
   * lock, and never once the buffer closed: the directory may be another broker's by then (a drain
   * still running past the close's wait deleted a file the next broker had counted, whose pending
   * count then never came back to 0). That broker drains it again, each message stored once.
   */
  private void retire(Path file, Path movedTo) throws IOException {
    appendLock.lock();
    try {
      if (closed) {
        throw new IOException(
            "the buffer is closed: " + file.getFileName() + " is left to the next broker");
      }
      long size = Files.size(file);
      if (movedTo == null) {
        Files.delete(file);
      } else {
        Files.move(file, movedTo);
      }
      counted.remove(BufferFiles.sequence(file));
      bytesOnDisk -= size;
    } finally {
      appendLock.unlock();
    }
  }

  /** Files set aside by {@link #quarantine}: their count and bytes. */
  public long[] quarantined() throws IOException {
    return BufferFiles.setAsideSizes(dir);
  }

  @Override
  public void close() throws IOException {
    try {
      appendLock.lock();
      try {
        closed = true;
        if (current != null) {
          closeCurrent();
        }
      } finally {
        appendLock.unlock();
      }
    } finally {
      lock.release();
      lockChannel.close();
    }
  }
}
