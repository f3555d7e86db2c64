-- The empty-scan watermark of the SQL wildcard path, per (queue, consumer group): partitions not
-- written since (watermark - 2 minutes) are not scanned. Advanced only when a scan found the
-- queue genuinely empty; checked_at throttles that re-check.
create table queen.log_scan_watermarks (
    queue_id       uuid not null references queen.queues (id) on delete cascade,
    consumer_group text not null,
    watermark      timestamptz not null,
    checked_at     timestamptz not null,
    primary key (queue_id, consumer_group)
);
