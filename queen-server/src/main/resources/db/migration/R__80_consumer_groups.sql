-- Consumer-group administration: delete, seek, subscription updates, and the lag views.
-- Cursor rows are locked in partition order (as acks lock them); pops never wait on them (SKIP
-- LOCKED), so a seek under load waits at most for the pops in flight on its partitions.

-- Announces a reset of the group on the queue (null: every queue) to every broker.
create or replace function queen.group_reset_note_v1(p_queue text, p_group text)
returns void
language plpgsql
as $$
begin
    delete from queen.group_resets where reset_at < now() - interval '1 hour';
    insert into queen.group_resets (queue_name, consumer_group) values (p_queue, p_group);
end;
$$;

create or replace function queen.group_resets_head_v1()
returns bigint
language plpgsql
stable
as $$
begin
    return (
    select coalesce(max(r.id), 0) from queen.group_resets r);
end;
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
    v_pid     uuid;
    v_lock    uuid;
begin
    if p_queue is not null then
        select q.id into v_qid from queen.queues q where q.name = p_queue;
        if not found then
            return query select false, 0, 0;
            return;
        end if;
    end if;
    -- wait for the pops creating the group's cursors right now: each holds the shared side of the
    -- (queue, group) lock while it inserts them, and rows not yet committed are neither seen nor
    -- waited for below, so they outlived the delete, seeded from a subscription it removed. Pops
    -- only try the lock: while it is held here they skip the queue. A delete on every queue locks
    -- at most 500 of them: a lock each, held to the commit, and PostgreSQL's shared lock table
    -- holds about 64 per connection; past that the race stays open, narrow as it is. The same for
    -- the empty-scan check (lock 45, see queen.group_seek_v1).
    for v_lock in
        select v_qid where v_qid is not null
        union
        select m.queue_id from queen.consumer_groups_metadata m
         where m.consumer_group = p_group and v_qid is null
        order by 1
        limit 500
    loop
        perform pg_advisory_xact_lock(hashtextextended(v_lock::text || '/' || p_group, 46));
        perform pg_advisory_xact_lock(hashtextextended(v_lock::text || '/' || p_group, 45));
    end loop;
    -- lock the cursors one by one in partition order (Citus locks one partition per statement)
    for v_pid in
        select c.partition_id
          from queen.log_consumers c
          join queen.log_partitions p on p.id = c.partition_id
         where c.consumer_group = p_group and (v_qid is null or p.queue_id = v_qid)
         order by c.partition_id
    loop
        perform 1 from queen.log_consumers c
         where c.partition_id = v_pid and c.consumer_group = p_group
           for update;
    end loop;
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
    v_off bigint;
    v_off_at timestamptz;
    v_last bigint;
    v_end   bigint;
    v_acked bigint[];
    r     record;
begin
    select q.id into v_qid from queen.queues q where q.name = p_queue;
    if not found then
        return query select false, 0;
        return;
    end if;
    -- Wait for an empty-scan check of (queue, group) in flight (it holds lock 45 to its commit):
    -- it read the cursors before this seek, and the watermark it writes after the delete below
    -- would hide the replay from the SQL scan path until the next push. Taken before the cursors'
    -- row locks, as a group delete takes it, so the two never wait on each other in a cycle.
    -- Lock 46 first, as a group delete does: a pop's first-contact seed (which only tries it,
    -- shared) then answers 'locked' instead of waiting on a cursor this seek inserted, while it
    -- holds another cursor that the seek's loop reaches next (a deadlock).
    perform pg_advisory_xact_lock(hashtextextended(v_qid::text || '/' || p_group, 46));
    perform pg_advisory_xact_lock(hashtextextended(v_qid::text || '/' || p_group, 45));
    -- Retention passes the queue over until this seek commits (it tries lock 44 shared): it read
    -- the cursors as they were before the seek moved them back, and deleted what the seek hands
    -- out again. One lock for the queue, not one per partition: a seek of 10,000 partitions would
    -- take more advisory locks than the server's lock table holds
    perform pg_advisory_xact_lock(hashtextextended(v_qid::text, 44));
    -- one cursor per statement, the seek computed here (on Citus a statement over the partitions
    -- runs on the workers, where the seek's own queries cannot)
    v_n := 0;
    for r in select p.id from queen.log_partitions p where p.queue_id = v_qid order by p.id
    loop
        -- read again under a key-share lock: a partition removed as inactive and pushed again
        -- while the loop ran has offsets from 0 under the same id, which the old read would skip
        select p.last_offset into v_last
          from queen.log_partitions p
         where p.id = r.id
           for key share;
        continue when not found;
        v_off := case when p_to_end then v_last
                      else queen.log_seek_v1(r.id, p_ts, v_last) end;
        v_off_at := queen.log_offset_created_at_v1(r.id, v_off);
        -- the lease the seek ends, live or lapsed: what it dead-lettered that the seek hands out
        -- again is no dead letter (left, the replayed message was both, and a requeue of its
        -- letter, now settled, delivered it a third time)
        select c.batch_end, c.acked_offsets into v_end, v_acked
          from queen.log_consumers c
         where c.partition_id = r.id and c.consumer_group = p_group
           for update;
        if v_end > v_off then
            delete from queen.dead_letters d
             where d.partition_id = r.id and d.consumer_group = p_group
               and d.msg_offset > v_off and d.msg_offset <= v_end
               and d.msg_offset = any (coalesce(v_acked, '{}')) and d.leased;
        end if;
        insert into queen.log_consumers as c (partition_id, consumer_group, committed, committed_at)
        values (r.id, p_group, v_off, v_off_at)
        on conflict (partition_id, consumer_group) do update
           set committed = excluded.committed, committed_at = excluded.committed_at,
               worker_id = null, lease_expires_at = null, lease_acquired_at = null, batch_end = null,
               acked_offsets = null, attempt_count = 0, attempt_offset = null, retry_count = 0,
               -- the failed range's end goes with its count: left, it kept the budget from being
               -- reset below it, and a replay's fourth failure went to the dead letters at once
               retry_end = null,
               -- a lease ended here was not acked by it, and a seek back hands out again what
               -- was committed; no earlier lease is told success for what is replayed
               released_by = null, released_to = null,
               redelivered_to = greatest(c.redelivered_to, c.batch_end,
                                         case when excluded.committed < c.committed
                                              then c.committed end);
        v_n := v_n + 1;
    end loop;
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
    v_last_at timestamptz;
begin
    select q.id into v_qid from queen.queues q where q.name = p_queue;
    if not found then
        return query select false, null::bigint;
        return;
    end if;
    v_pid := queen.partition_uuid(v_qid, p_partition);
    -- held to commit: a partition removed as inactive meanwhile is not seeked at its old offset
    select p.last_offset into v_last from queen.log_partitions p where p.id = v_pid for key share;
    if not found then
        return query select true, null::bigint;
        return;
    end if;
    v_last_at := queen.log_offset_created_at_v1(v_pid, v_last);
    insert into queen.log_consumers as c (partition_id, consumer_group, committed, committed_at)
    values (v_pid, p_group, v_last, v_last_at)
    on conflict (partition_id, consumer_group) do update
       set committed = excluded.committed, committed_at = excluded.committed_at,
           worker_id = null, lease_expires_at = null, lease_acquired_at = null, batch_end = null,
           acked_offsets = null, attempt_count = 0, attempt_offset = null, retry_count = 0,
           retry_end = null, released_by = null, released_to = null,
           redelivered_to = greatest(c.redelivered_to, c.batch_end,
                                     case when excluded.committed < c.committed then c.committed end);
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
    -- never queue mode's: it reads every partition from its first message (its seed ignores one)
    update queen.consumer_groups_metadata m
       set subscription_mode = 'timestamp', subscription_timestamp = p_ts
     where m.consumer_group = p_group and p_group <> '__QUEUE_MODE__';
    get diagnostics v_n = row_count;
    return v_n;
end;
$$;

-- Every cursor with its partition and when its oldest uncommitted message was created (null when
-- caught up): the segment holding committed + 1, or the oldest retained one when retention deleted
-- past the cursor; one primary-key probe per lagging cursor. A view rather than a function: on
-- Citus a function called per row runs on the workers, and may not query a distributed table there.
drop function if exists queen.cursor_oldest_unconsumed_v1(uuid, bigint, bigint, bigint);

create or replace view queen.cursor_lag as
select c.partition_id, c.consumer_group, c.committed, c.worker_id, c.lease_expires_at,
       c.last_consumed_at, c.total_consumed, p.queue_id, p.name as partition_name, p.last_offset,
       o.at as oldest_unconsumed_at, p.retained_from
  from queen.log_consumers c
  join queen.log_partitions p on p.id = c.partition_id
  left join lateral (select s.created_at as at
                       from queen.log_segments s
                      where s.partition_id = p.id
                        and s.base_offset <= greatest(c.committed + 1, p.retained_from)
                      order by s.base_offset desc
                      limit 1) o on p.last_offset > c.committed;

-- One page of the group's cursors (on one queue, or on all; from a partition name on) by queue and
-- partition, with their offset lag and lease and how many cursors there are (cursor_count). The
-- oldest unconsumed message of a lagging cursor is not probed here: the broker takes it from its
-- lag snapshot and probes the rest with group_oldest_unconsumed_v1 (1,000 probes were half of a
-- 30 ms page, most of them reads of segment pages outside shared buffers).
drop function if exists queen.group_detail_v1(text);
drop function if exists queen.group_detail_v2(text, text);
drop function if exists queen.group_detail_v3(text, text, text, integer, integer);

create or replace function queen.group_detail_v4(p_group text, p_queue text,
                                                 p_partition_from text, p_limit integer,
                                                 p_offset integer)
returns table (queue_name text, partition_name text, partition_id uuid, worker_id uuid,
               last_consumed_at timestamptz, total_consumed bigint, committed bigint,
               offset_lag bigint, lease_active boolean, cursor_count bigint)
language plpgsql
stable
as $$
#variable_conflict use_column
declare
    v_from   text := coalesce(p_partition_from, '');
    v_now    timestamptz := now();
    v_ids    uuid[];
    v_names  text[];
    v_counts bigint[];
    v_count  bigint;
    v_skip   bigint := p_offset;
    v_need   bigint := p_limit;
    i        integer;
begin
    -- how many cursors the group has on each queue: its cursors joined to their partitions, no sort
    select coalesce(array_agg(x.id order by x.name), '{}'),
           coalesce(array_agg(x.name order by x.name), '{}'),
           coalesce(array_agg(x.n order by x.name), '{}'), coalesce(sum(x.n), 0)
      into v_ids, v_names, v_counts, v_count
      from (select q.id, q.name, count(*) as n
              from queen.log_consumers c
              join queen.log_partitions p on p.id = c.partition_id
              join queen.queues q on q.id = p.queue_id
             where c.consumer_group = p_group and p.name >= v_from
               and (p_queue is null or q.name = p_queue)
             group by q.id, q.name) x;
    -- then the page, queue by queue in partition-name order: a statement planned for this queue
    -- and group, so that where the group reads most of the queue it walks log_partitions_by_name
    -- and stops at the page's end (1,000 of 10,000: 3 ms, against 19 ms sorting all of them)
    for i in 1 .. coalesce(array_length(v_ids, 1), 0) loop
        exit when v_need <= 0;
        if v_skip >= v_counts[i] then
            v_skip := v_skip - v_counts[i];
            continue;
        end if;
        return query execute
            'select $1, p.name, c.partition_id, c.worker_id, c.last_consumed_at, c.total_consumed,
                    c.committed,
                    greatest(p.last_offset - greatest(c.committed, p.retained_from - 1), 0),
                    c.worker_id is not null and c.lease_expires_at > $2, $3
               from queen.log_partitions p
               join queen.log_consumers c on c.partition_id = p.id and c.consumer_group = $4
              where p.queue_id = $5 and p.name >= $6
              order by p.name
              limit $7 offset $8'
            using v_names[i], v_now, v_count, p_group, v_ids[i], v_from, v_need, v_skip;
        v_need := v_need - least(v_counts[i] - v_skip, v_need);
        v_skip := 0;
    end loop;
end;
$$;

-- Every group's cursors on a page of one queue's partitions (p_limit of them by name, from
-- p_partition_from on), by group and partition, with their offset lag and lease: the dashboard's
-- queue page asked each group apart, one request per group at every refresh (3.9-4.8 s a
-- refresh at 30 groups).
create or replace function queen.queue_cursors_v1(p_queue text, p_partition_from text,
                                                  p_limit integer)
returns table (consumer_group text, partition_name text, partition_id uuid, worker_id uuid,
               last_consumed_at timestamptz, total_consumed bigint, committed bigint,
               offset_lag bigint, lease_active boolean)
-- plpgsql, not SQL: on Citus a SQL-language function reads the coordinator's empty shell tables
language plpgsql
stable
as $$
#variable_conflict use_column
begin
    return query
    select c.consumer_group, p.name, p.id, c.worker_id, c.last_consumed_at, c.total_consumed,
           c.committed, greatest(p.last_offset - greatest(c.committed, p.retained_from - 1), 0),
           c.worker_id is not null and c.lease_expires_at > now()
      from (select lp.id, lp.name, lp.last_offset, lp.retained_from
              from queen.log_partitions lp
              join queen.queues q on q.id = lp.queue_id
             where q.name = p_queue and lp.name >= coalesce(p_partition_from, '')
             order by lp.name
             limit p_limit) p
      join queen.log_consumers c on c.partition_id = p.id
     order by c.consumer_group, p.name;
end;
$$;

-- The created_at of the oldest unconsumed message of the group's lagging cursors on the given
-- partitions: one index probe into the segments each.
create or replace function queen.group_oldest_unconsumed_v1(p_group text, p_partition_ids uuid[])
returns table (partition_id uuid, oldest_unconsumed_at timestamptz)
language plpgsql
stable
as $$
#variable_conflict use_column
begin
    return query
    select l.partition_id, l.oldest_unconsumed_at
      from queen.cursor_lag l
     where l.consumer_group = p_group
       and l.partition_id = any (p_partition_ids)
       and l.oldest_unconsumed_at is not null;
end;
$$;

-- Cursors whose oldest uncommitted message is at least p_min_seconds old, the p_limit most lagging
-- first.
drop function if exists queen.groups_lagging_v1(integer);

create or replace function queen.groups_lagging_v2(p_min_seconds integer, p_limit integer)
returns table (consumer_group text, queue_name text, partition_name text, partition_id uuid,
               worker_id uuid, offset_lag bigint, time_lag_seconds bigint,
               oldest_unconsumed_at timestamptz, last_consumed_at timestamptz)
language plpgsql
stable
as $$
#variable_conflict use_column
begin
    return query
    select l.consumer_group, q.name, l.partition_name, l.partition_id, l.worker_id,
           l.last_offset - greatest(l.committed, l.retained_from - 1),
           extract(epoch from now() - l.oldest_unconsumed_at)::bigint, l.oldest_unconsumed_at,
           l.last_consumed_at
      from queen.cursor_lag l
      join queen.queues q on q.id = l.queue_id
     where l.last_offset > l.committed
       and l.oldest_unconsumed_at <= now() - make_interval(secs => p_min_seconds)
     order by l.oldest_unconsumed_at, l.consumer_group, q.name, l.partition_name
     limit p_limit;
end;
$$;
