package queen.server.ack;

import java.util.UUID;

/**
 * Told when acks ended a lease; {@code hasMore} when messages for the group remain behind it, and
 * {@code lease} the lease they named (null when they named none).
 */
@FunctionalInterface
public interface ReleaseListener {
  void released(String queue, String partition, String group, boolean hasMore, UUID lease);
}
