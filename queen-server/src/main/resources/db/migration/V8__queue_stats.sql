-- Statistics for the status routes and the dashboard, written off the hot path.

-- Per queue and minute: what the brokers pushed, delivered, acked, failed and dead-lettered in that
-- minute (each broker adds its counts every few seconds), and the lag sampled in it.
create table queen.queue_stats_minutes (
    queue_id        uuid not null references queen.queues (id) on delete cascade,
    minute          timestamptz not null,
    pushed          bigint not null default 0,
    popped          bigint not null default 0,
    acked           bigint not null default 0,
    failed          bigint not null default 0,
    dead_lettered   bigint not null default 0,
    lag_messages    bigint,
    max_lag_seconds bigint,
    primary key (queue_id, minute)
);

create index queue_stats_minutes_minute on queen.queue_stats_minutes (minute);

-- Per queue: message counts and lag as of updated_at, refreshed every few seconds by one broker.
create table queen.queue_stats (
    queue_id          uuid primary key references queen.queues (id) on delete cascade,
    partitions        bigint not null,
    total             bigint not null,
    pending           bigint not null,
    processing        bigint not null,
    completed         bigint not null,
    dead_letter       bigint not null,
    active_leases     bigint not null,
    lag_messages      bigint not null,
    max_lag_seconds   bigint not null,
    oldest_pending_at timestamptz,
    updated_at        timestamptz not null
);
