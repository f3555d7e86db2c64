package queen.server.pop;

import java.time.InstantSource;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import queen.server.codec.Frame;
import queen.server.codec.SegmentCodec;
import queen.server.codec.UuidV7;
import queen.server.store.Claim;
import queen.server.store.PartitionClaim;
import queen.server.store.PopStore;
import queen.server.store.SegmentSlice;
import queen.server.store.Verdict;

/**
 * Serves pops: claims in PostgreSQL, then cuts the delivered frames out of the segment blobs.
 *
 * <p>The frame walk happens after PostgreSQL has answered, never inside it: the database only
 * decides which offsets this consumer may take, under a row lock, and returns whole blobs.
 */
public final class PopService {
  private final PopStore store;
  private final GroupSeeds seeds;
  private final UuidV7 ids;

  public PopService(PopStore store, InstantSource clock) {
    this.store = store;
    this.seeds = new GroupSeeds(store);
    this.ids = new UuidV7(clock);
  }

  /** Pops once, without waiting. An unknown queue or partition delivers nothing. */
  public PopResult pop(PopRequest request) {
    // a fresh UUIDv7 worker id per request; on a leased pop it is the client's leaseId
    UUID worker = ids.next();
    Claim claim =
        new Claim(
            request.group(),
            worker,
            request.batch(),
            request.partitions(),
            request.autoAck(),
            request.newOnly(),
            request.from());
    seeds.ensure(request.target(), claim);
    List<PartitionClaim> claims =
        switch (request.target()) {
          case PopTarget.Partition p -> store.popSpecific(p.queue(), p.partition(), claim);
          case PopTarget.Queue q -> store.popWildcard(q.queue(), claim);
          case PopTarget.Discovery d -> store.popDiscover(d.namespace(), d.task(), claim);
        };
    return result(request, worker, claims);
  }

  private static PopResult result(PopRequest request, UUID worker, List<PartitionClaim> claims) {
    List<PoppedMessage> messages = new ArrayList<>();
    int claimed = 0;
    for (PartitionClaim claim : claims) {
      if (claim.verdict() != Verdict.DELIVERED) {
        continue;
      }
      claimed++;
      for (SegmentSlice slice : claim.slices()) {
        List<Frame> frames = SegmentCodec.decode(slice.blob(), slice.startIdx(), slice.take());
        long offset = slice.baseOffset() + slice.startIdx();
        for (Frame frame : frames) {
          messages.add(
              new PoppedMessage(
                  claim.queue(),
                  claim.partitionId(),
                  claim.partition(),
                  offset++,
                  claim.attempt(),
                  frame));
        }
      }
    }
    return new PopResult(request.autoAck() ? null : worker, request.group(), claimed, messages);
  }
}
