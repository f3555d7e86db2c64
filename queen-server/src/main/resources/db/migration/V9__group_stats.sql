-- Per (queue, consumer group): how old the oldest message is that the group has not committed, as
-- of updated_at. Refreshed with queen.queue_stats, so that the consumer-group list does not probe
-- every lagging cursor's segments on each request.
create table queen.group_stats (
    queue_id             uuid not null references queen.queues (id) on delete cascade,
    consumer_group       text not null,
    oldest_unconsumed_at timestamptz,
    updated_at           timestamptz not null,
    primary key (queue_id, consumer_group)
);
