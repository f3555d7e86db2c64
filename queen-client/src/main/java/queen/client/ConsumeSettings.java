package queen.client;

/** What a {@link Consumer} was started with, copied from its {@link QueueBuilder}. */
record ConsumeSettings(
    Queen queen,
    QueueBuilder query,
    int batch,
    int timeoutMillis,
    boolean longPoll,
    int concurrency,
    long limit,
    long idleMillis,
    long renewLeaseMillis,
    boolean autoAck) {}
