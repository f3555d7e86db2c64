-- Streams: the server side of Queen's streaming SDK. A query is registered by name with the hash
-- of its configuration; its operator state lives per (query, source partition, key) and changes
-- only inside a cycle, together with the cycle's pushes and its ack.
create table queen.stream_queries (
    id           uuid primary key,
    name         text not null unique,
    source_queue text not null,
    sink_queue   text,
    config_hash  text not null,
    created_at   timestamptz not null,
    updated_at   timestamptz not null
);

-- Updated on every cycle: value and updated_at are in no index, and the pages keep room, so the
-- updates stay HOT and the table stays small without vacuum. State goes with its query (reset,
-- delete) and with its partition (queue delete).
create table queen.stream_state (
    query_id     uuid not null references queen.stream_queries (id) on delete cascade,
    partition_id uuid not null references queen.log_partitions (id) on delete cascade,
    key          text not null,
    value        jsonb not null,
    updated_at   timestamptz not null,
    primary key (query_id, partition_id, key)
) with (fillfactor = 50);

-- the partition cascade finds a partition's state by this index, not by a scan
create index stream_state_partition on queen.stream_state (partition_id);
