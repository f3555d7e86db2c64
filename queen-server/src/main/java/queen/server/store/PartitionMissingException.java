package queen.server.store;

/**
 * A push named a partition id that no longer exists, because its queue was deleted since the id was
 * resolved. Nothing was written; the caller re-resolves and retries.
 */
public final class PartitionMissingException extends RuntimeException {
  public PartitionMissingException() {
    super("a partition of the push no longer exists", null, false, false);
  }
}
