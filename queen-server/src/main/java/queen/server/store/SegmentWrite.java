package queen.server.store;

import java.util.List;
import java.util.Set;
import java.util.UUID;
import queen.server.codec.Frame;
import queen.server.codec.SegmentCodec;

/**
 * One segment to append to a partition: its messages, in offset order, and their encoding.
 *
 * @param frames at least one, no transaction id twice
 */
public record SegmentWrite(UUID partitionId, List<Frame> frames, byte[] blob) {
  public SegmentWrite {
    if (frames.isEmpty()) {
      throw new IllegalArgumentException("a segment holds at least one message");
    }
  }

  /** Encodes the frames into a segment of the partition. */
  public static SegmentWrite of(UUID partitionId, List<Frame> frames) {
    return new SegmentWrite(partitionId, List.copyOf(frames), SegmentCodec.encode(frames));
  }

  public int count() {
    return frames.size();
  }

  /** The decoded size of the messages, which a pop counts against its byte budget. */
  public int rawBytes() {
    return SegmentCodec.rawLength(blob);
  }

  /** The transaction ids of the messages, in offset order. */
  public List<String> transactionIds() {
    return frames.stream().map(Frame::transactionId).toList();
  }

  /** The segment without the messages of these transaction ids; null when none remain. */
  public SegmentWrite without(Set<String> transactionIds) {
    List<Frame> rest =
        frames.stream().filter(f -> !transactionIds.contains(f.transactionId())).toList();
    return rest.isEmpty() ? null : of(partitionId, rest);
  }
}
