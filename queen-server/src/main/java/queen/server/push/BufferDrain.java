package queen.server.push;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.BooleanSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import queen.server.store.PartitionMissingException;
import queen.server.store.StoreException;

/**
 * One pass of the local buffer's drain: its sealed files, oldest first, fed back through the normal
 * push path in batches of whole records. A file is deleted once every batch of it has committed;
 * one the database refuses for good is set aside; anything else keeps it for the next pass.
 */
final class BufferDrain {
  private static final Logger log = LoggerFactory.getLogger(BufferDrain.class);

  /** Items handed to one push while draining: big enough to amortise, small enough to retry. */
  private static final int DRAIN_BATCH = 10_000;

  /**
   * Record bytes merged into one drain push. 10,000 items of 50 KB were one push of 500 MB, a heap
   * run out three times over while it was encoded (the broker ended, and drained it again at its
   * next start) and one segment that every pop of it decoded whole. A bigger record goes alone, as
   * big as the push it came from.
   */
  static final int DRAIN_BYTES = 8 << 20;

  private final PushService direct;
  private final PayloadSealing sealing;

  /** Maintenance went on, or the broker is closing: a pass stops between two batches. */
  private final BooleanSupplier stopping;

  /** Files whose messages are stored and that could not be removed yet (the drainer's alone). */
  private final Map<Path, Stored> unremoved = new HashMap<>();

  private final AtomicLong drained = new AtomicLong();
  private final AtomicLong failedRecords = new AtomicLong();

  BufferDrain(PushService direct, PayloadSealing sealing, BooleanSupplier stopping) {
    this.direct = direct;
    this.sealing = sealing;
    this.stopping = stopping;
  }

  /**
   * Messages of the files drained to their end so far: a file drained again from its start (after a
   * stop or an outage) counts once, where each batch of it counted at each pass.
   */
  long drained() {
    return drained.get();
  }

  /** Buffered messages set aside because the database refused them. */
  long failedRecords() {
    return failedRecords.get();
  }

  /**
   * Drains every sealed file, oldest first, in batches of whole records; stops on maintenance or an
   * outage (the file is drained again from its start: dedup stores each message once).
   */
  void drain(LocalBuffer buffer) throws IOException {
    // one an operator deleted or moved meanwhile is not waited for
    unremoved.keySet().removeIf(f -> !Files.exists(f));
    buffer.seal();
    for (Path file : buffer.sealedFiles()) {
      if (!buffer.counted(file)) {
        continue; // renamed back just now: counted, then drained, at the next turn
      }
      Stored stored = unremoved.get(file);
      if (stored != null) {
        remove(buffer, file, stored);
        continue;
      }
      FileDrain d = new FileDrain(buffer);
      boolean intact;
      try {
        intact = RecordFraming.forEachRecord(file, d::add);
        d.flush();
      } catch (Stopped | StoreException e) {
        buffer.stored(-d.stored); // the file is drained again from its start
        if (e instanceof StoreException se && se.refusedData()) {
          quarantine(buffer, file, se);
          continue;
        }
        if (e instanceof StoreException se) {
          // not the data: a server that takes no writes now (a failover's demoted primary, a
          // full disk, a cancel) set every file aside within one pass, and pushes after it went
          // straight to the database ahead of them
          throw se;
        }
        return;
      } catch (PartitionMissingException e) {
        // partitions removed as inactive again and again while the push prepared: not the data,
        // and the next turn creates them afresh
        buffer.stored(-d.stored);
        throw e;
      } catch (RuntimeException e) {
        buffer.stored(-d.stored);
        quarantine(buffer, file, e);
        continue;
      } catch (IOException e) {
        // counted again when the file is drained again: left counted off, the pending count
        // reached 0 early and the drain stopped with messages on disk. A file that stays
        // unreadable is tried again every half second, logged each time, and the files after it
        // wait: setting it aside would need its count, which it cannot give
        buffer.stored(-d.stored);
        throw e;
      }
      drained.addAndGet(d.stored);
      remove(buffer, file, new Stored(intact, d.stored));
    }
  }

  /** Whether drained files wait to be removed (deleted, or set aside as damaged). */
  boolean removalsWait() {
    return !unremoved.isEmpty();
  }

  /**
   * Removes a file whose messages are stored: deleted, or set aside when damaged. One that cannot
   * be removed (its directory made read-only, say) is tried again at the next pass, not drained
   * again: each pass pushed all of it again, counted it as drained again and, once the queue's
   * retention had removed the first copies, stored its messages twice. The files after it drain
   * meanwhile.
   */
  private void remove(LocalBuffer buffer, Path file, Stored s) {
    boolean deleted = false;
    try {
      if (s.intact()) {
        deleted = buffer.drained(file, s.messages());
      } else {
        buffer.setAsideDamaged(file, s.messages());
      }
    } catch (IOException e) {
      if (unremoved.put(file, s) == null) {
        log.warn(
            "buffered file {} is stored but cannot be removed, tried again at every pass: {}",
            file.getFileName(),
            e.getMessage());
      }
      return;
    }
    unremoved.remove(file);
    if (deleted) {
      return;
    }
    // kept: deleted, it took the answered records after the damage with it without a word
    log.error(
        "buffered file {} is damaged after its first {} messages, which are stored; the"
            + " records after the damage are not, and the file is kept as {}.failed",
        file.getFileName(),
        s.messages(),
        file.getFileName());
  }

  /** A file read to its end: whether whole, and the messages stored from it. */
  private record Stored(boolean intact, long messages) {}

  /** Maintenance went on, or the broker is closing: the drain stops between two batches. */
  private static final class Stopped extends RuntimeException {
    Stopped() {
      super(null, null, false, false);
    }
  }

  /** One file's drain: records merged into batches of up to DRAIN_BATCH items and DRAIN_BYTES. */
  private final class FileDrain {
    private final LocalBuffer buffer;
    private List<PushItem> batch = new ArrayList<>();
    private long batchBytes;
    private long stored;

    FileDrain(LocalBuffer buffer) {
      this.buffer = buffer;
    }

    void add(byte[] record) {
      List<PushItem> items = BufferRecord.decode(record, sealing);
      if (!batch.isEmpty()
          && (batch.size() + items.size() > DRAIN_BATCH
              || batchBytes + record.length > DRAIN_BYTES)) {
        flush();
      }
      batch.addAll(items);
      batchBytes += record.length;
    }

    void flush() {
      if (stopping.getAsBoolean()) {
        throw new Stopped();
      }
      if (batch.isEmpty()) {
        return;
      }
      direct.push(batch);
      buffer.stored(batch.size());
      stored += batch.size();
      batch = new ArrayList<>();
      batchBytes = 0;
    }
  }

  /** A file the database refuses for good (not an outage) is set aside, never dropped. */
  private void quarantine(LocalBuffer buffer, Path file, RuntimeException e) throws IOException {
    long messages = buffer.quarantine(file);
    buffer.stored(messages);
    failedRecords.addAndGet(messages);
    log.error(
        "buffered file {} ({} messages) cannot be stored and is kept as {}.failed",
        file.getFileName(),
        messages,
        file.getFileName(),
        e);
  }
}
