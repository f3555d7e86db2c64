package queen.client;

/**
 * How a client with several broker URLs chooses one for a request.
 *
 * <pre>{@code
 * Queen.builder().urls(urls).loadBalancing(LoadBalancing.ROUND_ROBIN).build();
 * }</pre>
 */
public enum LoadBalancing {
  /**
   * Consistent hashing of the request's key (queue, partition, group) over the URLs, so that one
   * consumer keeps talking to one broker while it is healthy. The default.
   */
  AFFINITY,
  /** Each request to the next healthy URL. */
  ROUND_ROBIN,
  /** Each key sticks to the URL it was first given, assigned round-robin. */
  SESSION
}
