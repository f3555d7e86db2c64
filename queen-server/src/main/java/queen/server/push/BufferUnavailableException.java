package queen.server.push;

/**
 * A push that had to be buffered and could not be: the buffer directory is unusable, the disk is
 * full or the buffer's size budget is spent. Answered 503; nothing of the push was written.
 */
public final class BufferUnavailableException extends RuntimeException {
  public BufferUnavailableException(String message) {
    super(message, null, false, false);
  }
}
