package queen.server.pop;

import java.util.HashMap;
import java.util.Map;
import java.util.Set;

/**
 * What was pushed to each ready partition of a ring since it became ready, as far as pushes tell:
 * the minimum pop wait holds a pop until a batch's worth has arrived. Not thread-safe: its ring
 * guards it.
 */
final class Arrivals {
  /** Messages and their payload bytes; a count of -1 when unknown (a reseed, an ack-promote). */
  record Amount(long count, long bytes) {
    static final Amount UNKNOWN = new Amount(-1, 0);

    Amount plus(Amount more) {
      return count < 0 || more.count < 0
          ? UNKNOWN
          : new Amount(count + more.count, bytes + more.bytes);
    }
  }

  private final Map<String, Amount> byPartition = new HashMap<>();

  /** A push stored {@code count} messages (-1: unknown) of {@code bytes} bytes in a partition. */
  void add(String partition, long count, long bytes) {
    byPartition.merge(partition, new Amount(count, bytes), Amount::plus);
  }

  /** The partition became ready for a reason that tells no amount. */
  void unknown(String partition) {
    byPartition.putIfAbsent(partition, Amount.UNKNOWN);
  }

  void remove(String partition) {
    byPartition.remove(partition);
  }

  Set<String> partitions() {
    return byPartition.keySet();
  }

  /** What arrived in these partitions together, or null when any amount is unknown. */
  Amount total(Iterable<String> partitions) {
    long count = 0;
    long bytes = 0;
    for (String p : partitions) {
      Amount a = byPartition.getOrDefault(p, Amount.UNKNOWN);
      if (a.count() < 0) {
        return null;
      }
      count += a.count();
      bytes += a.bytes();
    }
    return new Amount(count, bytes);
  }
}
