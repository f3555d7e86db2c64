package queen.client;

/**
 * Handles one message (see {@link QueueBuilder#each()}). Returning acks it completed (with auto-ack
 * on); throwing acks it failed with the exception's message.
 *
 * <pre>{@code
 * MessageHandler h = m -> mailer.send(m.data(Email.class));
 * }</pre>
 */
@FunctionalInterface
public interface MessageHandler {
  void handle(Message message) throws Exception;
}
