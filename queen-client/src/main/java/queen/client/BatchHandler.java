package queen.client;

import java.util.List;

/**
 * Handles one popped batch. Returning acks the batch completed (with auto-ack on); throwing acks it
 * failed with the exception's message, so it is delivered again or dead-lettered.
 *
 * <pre>{@code
 * BatchHandler h = batch -> repository.saveAll(batch.stream().map(m -> m.data(Order.class)).toList());
 * }</pre>
 */
@FunctionalInterface
public interface BatchHandler {
  void handle(List<Message> batch) throws Exception;
}
