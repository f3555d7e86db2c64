package queen.server.ack;

/** Told when acks ended a lease; {@code hasMore} when messages for the group remain behind it. */
@FunctionalInterface
public interface ReleaseListener {
  void released(String queue, String partition, String group, boolean hasMore);
}
