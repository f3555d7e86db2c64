-- Consumer-group administration: delete, seek, subscription updates, and the lag views.
-- Cursor rows are locked in partition order (as acks lock them); pops never wait on them (SKIP
-- LOCKED), so a seek under load waits at most for the pops in flight on its partitions.

-- Announces a reset of the group on the queue (null: every queue) to every broker.
create or replace function queen.group_reset_note_v1(p_queue text, p_group text)
returns void
language sql
as $$
    delete from queen.group_resets where reset_at < now() - interval '1 hour';
    insert into queen.group_resets (queue_name, consumer_group) values (p_queue, p_group);
$$;

create or replace function queen.group_resets_head_v1()
returns bigint
language sql
stable
as $$
    select coalesce(max(r.id), 0) from queen.group_resets r
$$;

-- Deletes the group's cursors on one queue (p_queue) or on every queue (null). Leases go with the
-- cursors, so an ack on one of them finds no lease. With p_delete_metadata the subscription
-- records go too (the next pop subscribes afresh); without, they stay and are marked unseeded, so
-- the next pop recreates every cursor from the recorded subscription. queue_found is false only
-- for a named queue that does not exist.
create or replace function queen.group_delete_v1(p_group text, p_queue text, p_delete_metadata boolean)
returns table (queue_found boolean, deleted_partitions integer, metadata_deleted integer)
language plpgsql
as $$
#variable_conflict use_column
declare
    v_qid     uuid;
    v_deleted integer;
    v_meta    integer := 0;
begin
    if p_queue is not null then
        select q.id into v_qid from queen.queues q where q.name = p_queue;
        if not found then
            return query select false, 0, 0;
            return;
        end if;
    end if;
    perform 1 from queen.log_consumers c
      join queen.log_partitions p on p.id = c.partition_id
     where c.consumer_group = p_group and (v_qid is null or p.queue_id = v_qid)
     order by c.partition_id
       for update of c;
    delete from queen.log_consumers c
     using queen.log_partitions p
     where p.id = c.partition_id and c.consumer_group = p_group
       and (v_qid is null or p.queue_id = v_qid);
    get diagnostics v_deleted = row_count;
    -- the write watermark said "nothing new for this group": no longer true
    delete from queen.log_scan_watermarks w
     where w.consumer_group = p_group and (v_qid is null or w.queue_id = v_qid);
    if p_delete_metadata then
        delete from queen.consumer_groups_metadata m
         where m.consumer_group = p_group and (v_qid is null or m.queue_id = v_qid);
        get diagnostics v_meta = row_count;
    else
        update queen.consumer_groups_metadata m set seeded_at = null
         where m.consumer_group = p_group and (v_qid is null or m.queue_id = v_qid);
    end if;
    perform queen.group_reset_note_v1(p_queue, p_group);
    return query select true, v_deleted, v_meta;
end;
$$;

-- Moves the group's cursor on every partition of the queue (creating the missing ones, so that
-- the seek holds for partitions the group never read): to the newest message (p_to_end), or to
-- just before the first message created at or after p_ts (so those are delivered again, and
-- nothing older). Live leases are released: an ack on one finds no lease. Returns how many cursors
-- were set; queue_found false for an unknown queue.
create or replace function queen.group_seek_v1(
    p_group text, p_queue text, p_to_end boolean, p_ts timestamptz)
returns table (queue_found boolean, partitions_updated integer)
language plpgsql
as $$
#variable_conflict use_column
declare
    v_qid uuid;
    v_n   integer;
begin
    select q.id into v_qid from queen.queues q where q.name = p_queue;
    if not found then
        return query select false, 0;
        return;
    end if;
    insert into queen.log_consumers as c (partition_id, consumer_group, committed)
    select p.id, p_group,
           case when p_to_end then p.last_offset
                else queen.log_seek_v1(p.id, p_ts, p.last_offset) end
      from queen.log_partitions p
     where p.queue_id = v_qid
     order by p.id
    on conflict (partition_id, consumer_group) do update
       set committed = excluded.committed,
           worker_id = null, lease_expires_at = null, lease_acquired_at = null, batch_end = null,
           acked_offsets = null, attempt_count = 0, attempt_offset = null, retry_count = 0;
    get diagnostics v_n = row_count;
    delete from queen.log_scan_watermarks w
     where w.consumer_group = p_group and w.queue_id = v_qid;
    perform queen.group_reset_note_v1(p_queue, p_group);
    return query select true, v_n;
end;
$$;

-- Seeks the group's cursor on one partition to its newest message. cursor is null when the queue
-- or the partition does not exist.
create or replace function queen.group_seek_partition_v1(p_group text, p_queue text, p_partition text)
returns table (queue_found boolean, cursor_offset bigint)
language plpgsql
as $$
#variable_conflict use_column
declare
    v_qid  uuid;
    v_pid  uuid;
    v_last bigint;
begin
    select q.id into v_qid from queen.queues q where q.name = p_queue;
    if not found then
        return query select false, null::bigint;
        return;
    end if;
    select p.id, p.last_offset into v_pid, v_last
      from queen.log_partitions p where p.queue_id = v_qid and p.name = p_partition;
    if not found then
        return query select true, null::bigint;
        return;
    end if;
    insert into queen.log_consumers as c (partition_id, consumer_group, committed)
    values (v_pid, p_group, v_last)
    on conflict (partition_id, consumer_group) do update
       set committed = excluded.committed,
           worker_id = null, lease_expires_at = null, lease_acquired_at = null, batch_end = null,
           acked_offsets = null, attempt_count = 0, attempt_offset = null, retry_count = 0;
    perform queen.group_reset_note_v1(p_queue, p_group);
    return query select true, v_last;
end;
$$;

-- Sets the subscription start of the group on every queue it has a record for. Only cursors
-- created afterwards start from it; existing cursors stay where they are.
create or replace function queen.group_subscription_v1(p_group text, p_ts timestamptz)
returns integer
language plpgsql
as $$
declare
    v_n integer;
begin
    update queen.consumer_groups_metadata m
       set subscription_mode = 'timestamp', subscription_timestamp = p_ts
     where m.consumer_group = p_group;
    get diagnostics v_n = row_count;
    return v_n;
end;
$$;

-- When the oldest message the cursor has not committed was created (null when caught up): the
-- segment holding committed + 1, or the oldest retained one when retention deleted past the
-- cursor. One primary-key probe.
create or replace function queen.cursor_oldest_unconsumed_v1(
    p_partition_id uuid, p_committed bigint, p_last bigint, p_retained_from bigint)
returns timestamptz
language sql
stable
as $$
    select case when p_last > p_committed then
           (select s.created_at
              from queen.log_segments s
             where s.partition_id = p_partition_id
               and s.base_offset <= greatest(p_committed + 1, p_retained_from)
             order by s.base_offset desc limit 1)
           end
$$;

-- Every cursor of the group, by queue, with its lag and lease.
create or replace function queen.group_detail_v1(p_group text)
returns table (queue_name text, partition_name text, partition_id uuid, worker_id uuid,
               last_consumed_at timestamptz, total_consumed bigint, committed bigint,
               offset_lag bigint, time_lag_seconds bigint, lease_active boolean)
language sql
stable
as $$
    select q.name, p.name, p.id, c.worker_id, c.last_consumed_at, c.total_consumed, c.committed,
           greatest(p.last_offset - c.committed, 0),
           coalesce(extract(epoch from now() - o.at)::bigint, 0),
           c.worker_id is not null and c.lease_expires_at > now()
      from queen.log_consumers c
      join queen.log_partitions p on p.id = c.partition_id
      join queen.queues q on q.id = p.queue_id
     cross join lateral (select queen.cursor_oldest_unconsumed_v1(
                                    p.id, c.committed, p.last_offset, p.retained_from) as at) o
     where c.consumer_group = p_group
     order by q.name, p.name
$$;

-- Cursors whose oldest uncommitted message is at least p_min_seconds old, most lagging first.
create or replace function queen.groups_lagging_v1(p_min_seconds integer)
returns table (consumer_group text, queue_name text, partition_name text, partition_id uuid,
               worker_id uuid, offset_lag bigint, time_lag_seconds bigint,
               oldest_unconsumed_at timestamptz, last_consumed_at timestamptz)
language sql
stable
as $$
    select c.consumer_group, q.name, p.name, p.id, c.worker_id,
           p.last_offset - c.committed, extract(epoch from now() - o.at)::bigint, o.at,
           c.last_consumed_at
      from queen.log_consumers c
      join queen.log_partitions p on p.id = c.partition_id
      join queen.queues q on q.id = p.queue_id
     cross join lateral (select queen.cursor_oldest_unconsumed_v1(
                                    p.id, c.committed, p.last_offset, p.retained_from) as at) o
     where p.last_offset > c.committed
       and o.at <= now() - make_interval(secs => p_min_seconds)
     order by o.at, c.consumer_group, q.name, p.name
$$;
