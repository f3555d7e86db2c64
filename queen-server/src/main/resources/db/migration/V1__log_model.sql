-- The log model of DESIGN.md: queues of partitions, each partition an ordered log of segments,
-- one cursor row per (partition, consumer group).

create table queen.queues (
    id                          uuid primary key default gen_random_uuid(),
    name                        text not null unique,
    namespace                   text not null default '',
    task                        text not null default '',
    lease_time                  integer not null default 300,
    retry_limit                 integer not null default 3,
    retry_delay                 integer not null default 1000,
    priority                    integer not null default 0,
    max_size                    integer not null default 0,
    ttl                         integer not null default 3600,
    dead_letter_queue           boolean not null default false,
    dlq_after_max_retries       boolean not null default false,
    delayed_processing          integer not null default 0,
    window_buffer               integer not null default 0,
    retention_enabled           boolean not null default false,
    retention_seconds           integer not null default 0,
    completed_retention_seconds integer not null default 0,
    max_wait_time_seconds       integer not null default 0,
    encryption_enabled          boolean not null default false,
    min_pop_wait_time           integer not null default 0,
    created_at                  timestamptz not null default now(),
    updated_at                  timestamptz not null default now()
);

create index queues_namespace_task on queen.queues (namespace, task);

-- fillfactor leaves room for HOT updates: every push updates its partition row.
create table queen.log_partitions (
    id                uuid primary key default gen_random_uuid(),
    queue_id          uuid not null references queen.queues (id) on delete cascade,
    name              text not null,
    -- offset of the newest message, -1 while empty; taken under this row's lock by each push
    last_offset       bigint not null default -1,
    -- quantized to the second so that most pushes leave the indexed column alone (HOT updates)
    last_write_at     timestamptz not null default date_trunc('second', now()),
    -- exact created_at of the newest segment: the floor that keeps segment created_at monotone
    newest_created_at timestamptz,
    created_at        timestamptz not null default now(),
    unique (queue_id, name)
) with (fillfactor = 70);

-- the wildcard candidate scan's write watermark
create index log_partitions_recent on queen.log_partitions (queue_id, last_write_at);

-- One row per (push, partition): consecutive offsets [base_offset, end_offset], encoded by the broker.
create table queen.log_segments (
    partition_id uuid not null references queen.log_partitions (id) on delete cascade,
    base_offset  bigint not null,
    end_offset   bigint not null,
    msg_count    integer not null,
    created_at   timestamptz not null,
    blob         bytea not null,
    primary key (partition_id, base_offset),
    check (msg_count > 0 and end_offset = base_offset + msg_count - 1)
);

-- blobs are already zstd-compressed: do not let TOAST try again
alter table queen.log_segments alter column blob set storage external;

-- The transactionId index: exactly-once push (dedup) and acks that arrive without the registry.
create table queen.log_txn_ids (
    partition_id   uuid not null references queen.log_partitions (id) on delete cascade,
    transaction_id text not null,
    msg_offset     bigint not null,
    message_id     uuid not null,
    primary key (partition_id, transaction_id)
);

create table queen.log_consumers (
    partition_id      uuid not null references queen.log_partitions (id) on delete cascade,
    consumer_group    text not null,
    -- offset of the newest acknowledged message; -1 before the first
    committed         bigint not null,
    -- the lease: worker_id is the pop's leaseId and covers (committed, batch_end]
    worker_id         uuid,
    lease_expires_at  timestamptz,
    lease_acquired_at timestamptz,
    batch_end         bigint,
    -- offsets inside the lease acked ahead of the cursor (partial, out-of-order acks)
    acked_offsets     bigint[],
    -- redelivery telemetry: a delivery starting where the previous one started is a redelivery
    attempt_count     integer not null default 0,
    attempt_offset    bigint,
    -- the retry budget, charged once per failed batch by an explicit failed ack
    retry_count       integer not null default 0,
    total_consumed    bigint not null default 0,
    last_consumed_at  timestamptz,
    created_at        timestamptz not null default now(),
    primary key (partition_id, consumer_group)
) with (fillfactor = 70);

-- lease extend finds every partition leased by one worker id
create index log_consumers_worker on queen.log_consumers (worker_id) where worker_id is not null;

-- Per (queue, group): the durable subscription start and the first-contact seed marker.
create table queen.consumer_groups_metadata (
    queue_id               uuid not null references queen.queues (id) on delete cascade,
    consumer_group         text not null,
    subscription_mode      text not null default 'all',
    subscription_timestamp timestamptz,
    seeded_at              timestamptz,
    created_at             timestamptz not null default now(),
    primary key (queue_id, consumer_group)
);

create table queen.dead_letters (
    partition_id   uuid not null references queen.log_partitions (id) on delete cascade,
    consumer_group text not null,
    msg_offset     bigint not null,
    message_id     uuid not null,
    transaction_id text not null,
    trace_id       uuid,
    producer_sub   text,
    flags          smallint not null default 0,
    payload        bytea not null,
    error_message  text,
    retry_count    integer not null default 0,
    created_at     timestamptz not null,
    failed_at      timestamptz not null default now(),
    primary key (partition_id, consumer_group, msg_offset)
);

create index dead_letters_failed_at on queen.dead_letters (failed_at desc);
