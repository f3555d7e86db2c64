package queen.server.push;

/** Told of every stored push before its response is sent (the hot-list feed). */
@FunctionalInterface
public interface PushListener {
  /** {@code count} messages of {@code bytes} payload bytes were committed to the partition. */
  void stored(String queue, String partition, int count, long bytes);
}
