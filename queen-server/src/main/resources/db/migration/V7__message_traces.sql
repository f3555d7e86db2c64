-- Traces: events a consumer records against one message (msg.trace() in Queen's clients), found
-- by message and by name. They belong to their message: retention deletes them with its segment.
create table queen.message_traces (
    id             uuid primary key,
    partition_id   uuid not null references queen.log_partitions (id) on delete cascade,
    msg_offset     bigint not null,
    transaction_id text not null,
    consumer_group text,
    worker_id      text,
    event_type     text not null,
    data           jsonb not null,
    trace_names    text[] not null,
    created_at     timestamptz not null default now()
);

create index message_traces_message on queen.message_traces (partition_id, msg_offset);

-- One row per (name, trace): the by-name view pages newest first through its own index.
create table queen.message_trace_names (
    trace_name text not null,
    created_at timestamptz not null,
    trace_id   uuid not null references queen.message_traces (id) on delete cascade,
    primary key (trace_name, created_at, trace_id)
);

create index message_trace_names_trace on queen.message_trace_names (trace_id);
