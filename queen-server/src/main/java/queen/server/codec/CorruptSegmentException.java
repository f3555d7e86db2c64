package queen.server.codec;

/** A segment blob that cannot be decoded: truncated, corrupted, or of an unknown version. */
public class CorruptSegmentException extends RuntimeException {
  public CorruptSegmentException(String message) {
    super(message);
  }

  public CorruptSegmentException(String message, Throwable cause) {
    super(message, cause);
  }
}
