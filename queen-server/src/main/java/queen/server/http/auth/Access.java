package queen.server.http.auth;

/**
 * What a route requires and what a token grants, lowest first (WIRE.md section 0): every route
 * declares one where it is declared, and a token grants the highest level its roles name.
 */
public enum Access {
  /** Health, metrics, CORS preflight: no token asked for. */
  PUBLIC,
  /** Looking: the GETs of status, resources, messages, consumer groups, dead letters, traces. */
  READ_ONLY,
  /** Producing and consuming: push, pop, ack, transactions, configure, seeks, message deletes. */
  READ_WRITE,
  /** Changing the cluster: system switches, group and queue deletes, statistics refresh. */
  ADMIN;

  /** Whether a caller granted this level may use a route that requires {@code required}. */
  public boolean grants(Access required) {
    return compareTo(required) >= 0;
  }
}
