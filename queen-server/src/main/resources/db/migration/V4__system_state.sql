-- Cluster-wide switches every broker reads (pop maintenance mode, ...), keyed by name.
create table queen.system_state (
    key        text primary key,
    value      jsonb not null,
    updated_at timestamptz not null default now()
);
