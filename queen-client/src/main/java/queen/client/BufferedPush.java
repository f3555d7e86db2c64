package queen.client;

import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * Pushes into a client-side buffer for one queue and partition, made by {@link
 * QueueBuilder#buffer}. Items are sent when the buffer holds its message count, when its time runs
 * out, on {@link #flush()}, {@link Queen#flushAllBuffers()} or {@link Queen#close()}. Buffered
 * items are lost if the process dies before they are sent: use it for throughput where that is
 * acceptable.
 *
 * <pre>{@code
 * BufferedPush events = queen.queue("events").buffer(500, 100);
 * for (Event e : stream) events.push(e);
 * events.flush();
 * }</pre>
 */
public final class BufferedPush {
  private final Queen queen;
  private final String queue;
  private final String partition;
  private final int messageCount;
  private final long millis;

  BufferedPush(Queen queen, String queue, String partition, int messageCount, long millis) {
    this.queen = queen;
    this.queue = queue;
    this.partition = partition;
    this.messageCount = messageCount;
    this.millis = millis;
  }

  /** Buffers the items (see {@link QueueBuilder#push(List)}); each result is {@code buffered}. */
  public List<PushResult> push(List<?> items) {
    List<ObjectNode> wire = new ArrayList<>(items.size());
    List<PushResult> results = new ArrayList<>(items.size());
    for (Object item : items) {
      ObjectNode envelope = PushItems.envelope(queue, partition, item);
      wire.add(envelope);
      results.add(
          new PushResult("buffered", envelope.get("transactionId").asText(), null, null, null));
    }
    queen.buffers.add(queue, partition, messageCount, millis, wire);
    return results;
  }

  public List<PushResult> push(Object... items) {
    return push(Arrays.asList(items));
  }

  /** Sends what this queue and partition's buffer holds now. */
  public void flush() {
    queen.buffers.flush(queue, partition);
  }
}
