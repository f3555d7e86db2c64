package queen.server.store;

import java.util.Map;
import java.util.UUID;

/**
 * What happened to one segment of a push.
 *
 * @param written the segment actually stored (duplicates removed), or null when every message was a
 *     duplicate
 * @param baseOffset offset of the first stored message, or -1 when nothing was stored
 * @param duplicates transaction ids that were already stored in the partition, with the id of the
 *     message that owns each
 */
public record AppendOutcome(SegmentWrite written, long baseOffset, Map<String, UUID> duplicates) {}
