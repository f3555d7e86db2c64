-- Analytics: messages retention deleted, per queue and minute; and one row per broker and minute
-- with its process and pool figures and the long-polls parked on it, written with the statistics
-- tick (one call per QUEEN_STATS_INTERVAL_MS), kept seven days.
alter table queen.queue_stats_minutes add column retention_deleted bigint not null default 0;

create table queen.broker_stats_minutes (
    broker_id            text not null,
    minute               timestamptz not null,
    hostname             text not null,
    started_at           timestamptz not null,
    rss_bytes            bigint,
    heap_used_bytes      bigint not null,
    heap_committed_bytes bigint not null,
    cpu_percent          double precision,
    threads              integer not null,
    db_pool_active       integer not null,
    db_pool_idle         integer not null,
    db_pool_waiting      integer not null,
    pushed               bigint not null default 0,
    popped               bigint not null default 0,
    acked                bigint not null default 0,
    parked               jsonb not null default '{}',
    primary key (broker_id, minute)
);

create index broker_stats_minutes_minute on queen.broker_stats_minutes (minute);
