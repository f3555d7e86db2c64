package queen.server.ack;

/** Told when an ack released a lease while the partition still has messages for the group. */
@FunctionalInterface
public interface ReleaseListener {
  void released(String queue, String partition, String group);
}
