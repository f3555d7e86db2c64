package queen.server.store;

/**
 * A queue's options as stored. Durations are seconds except {@code retryDelay} and {@code
 * minPopWaitTime}, which are milliseconds; 0 means off (or, for leaseTime, "use 60 s").
 */
public record QueueOptions(
    int leaseTime,
    int retryLimit,
    int retryDelay,
    int priority,
    int maxSize,
    int ttl,
    boolean deadLetterQueue,
    boolean dlqAfterMaxRetries,
    int delayedProcessing,
    int windowBuffer,
    boolean retentionEnabled,
    int retentionSeconds,
    int completedRetentionSeconds,
    int maxWaitTimeSeconds,
    boolean encryptionEnabled,
    int minPopWaitTime) {}
