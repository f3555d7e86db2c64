package queen.server.http;

/**
 * What one push accepts (also the push operations of a transaction): beyond either limit the whole
 * request is refused with a 413 naming the limit, and nothing is stored.
 *
 * @param maxItems QUEEN_MAX_PUSH_ITEMS, items per request
 * @param maxPayloadBytes QUEEN_MAX_PAYLOAD_BYTES, bytes of one item's payload as sent
 */
public record PushLimits(int maxItems, int maxPayloadBytes) {
  public static final PushLimits DEFAULT = new PushLimits(10_000, 10 << 20);
}
