package queen.server;

import java.util.List;
import java.util.UUID;
import queen.server.ack.AckRegistry;
import queen.server.ack.AckService;
import queen.server.ack.ReleaseListener;
import queen.server.pop.DeliveryListener;

/**
 * Where a pop's outcome goes: leases to the ack registry, skipped messages to the acks, a lease
 * given back to the hot-lists and the other brokers as a release.
 */
record Deliveries(AckRegistry registry, AckService ack, ReleaseListener released)
    implements DeliveryListener {

  @Override
  public void leased(UUID leaseId, String group, List<Leased> partitions) {
    registry.leased(leaseId, group, partitions);
  }

  @Override
  public void skipped(UUID leaseId, String group, List<Skipped> messages) {
    ack.skipped(leaseId, group, messages);
  }

  @Override
  public void gaveBack(UUID leaseId, String group, String queue, String partition) {
    released.released(queue, partition, group, true, leaseId);
  }
}
