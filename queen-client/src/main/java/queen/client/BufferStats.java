package queen.client;

import java.time.Duration;

/**
 * What client-side push buffers hold.
 *
 * <pre>{@code
 * BufferStats s = queen.bufferStats();
 * log.info("{} waiting in {} buffers", s.bufferedMessages(), s.activeBuffers());
 * }</pre>
 *
 * @param activeBuffers buffers (one per queue and partition) holding at least one item
 * @param bufferedMessages items waiting to be sent
 * @param oldestBufferAge age of the oldest waiting item, zero when none
 * @param flushesPerformed pushes the buffers sent so far
 */
public record BufferStats(
    int activeBuffers, int bufferedMessages, Duration oldestBufferAge, long flushesPerformed) {}
