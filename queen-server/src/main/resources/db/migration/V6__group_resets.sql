-- Consumer-group deletes and seeks, announced to every broker: each broker reads the rows after
-- the last id it saw (every QUEEN_STATE_REFRESH_MS) and drops its cached view of that group
-- (hot-list ring, first-contact seed marker). queue_name null means every queue. Rows older than
-- an hour are pruned by the next reset: the brokers' periodic reseeds repair anything older.
create table queen.group_resets (
    id             bigint generated always as identity primary key,
    queue_name     text,
    consumer_group text not null,
    reset_at       timestamptz not null default now()
);
