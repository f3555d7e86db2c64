package queen.server;

import java.util.UUID;
import queen.server.ack.AckRegistry;
import queen.server.mesh.Hints;
import queen.server.ops.StateRefresher;
import queen.server.pop.HotLists;
import queen.server.pop.PopService;

/** What another broker's hints change here: the hot-lists, the ack registry, the shared state. */
record HintsReceived(AckRegistry registry, HotLists hot, StateRefresher refresher, PopService pop)
    implements Hints.Receiver {

  @Override
  public void pushed(String queue, String partition, int count, long bytes) {
    hot.pushed(queue, partition, count, bytes);
  }

  @Override
  public void released(String queue, String partition, String group, boolean hasMore, UUID lease) {
    // first: the wake below may let a pop here register the pair's next lease
    registry.releasedElsewhere(queue, partition, group, lease);
    hot.released(queue, partition, group, hasMore);
  }

  @Override
  public void refresh() {
    refresher.refreshQuietly();
    hot.releaseGates();
  }

  @Override
  public void reconnected() {
    refresher.refreshQuietly();
    pop.wakeAll();
  }
}
