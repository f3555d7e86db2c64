-- Operator views, the queue delete and the queue clear. Counts are computed live from partition
-- heads and cursors; the consumer groups' time lag comes from the statistics snapshot.

-- Removes a queue with its partitions, segments, cursors, subscriptions and dead letters
-- (all cascade from queen.queues); false when there was no such queue.
create or replace function queen.queue_delete_v1(p_name text)
returns boolean
language plpgsql
as $$
declare
    v_id  uuid;
    v_pid uuid;
begin
    select q.id into v_id from queen.queues q where q.name = p_name;
    if not found then
        return false;
    end if;
    -- The partitions locked in id order first, the order pushes and retention's pages take them:
    -- the cascade's own order met a page of retention holding some of them and deadlocked. One
    -- statement, or one per partition where Citus refuses to lock rows of several shards at once.
    if not queen.distributed() then
        perform 1 from queen.log_partitions p where p.queue_id = v_id order by p.id for update;
    else
        -- one connection per worker: after a parallel read of the shards Citus refuses to modify
        -- the queues reference table in the same transaction
        perform set_config('citus.multi_shard_modify_mode', 'sequential', true);
        for v_pid in select p.id from queen.log_partitions p where p.queue_id = v_id order by p.id loop
            perform 1 from queen.log_partitions p where p.id = v_pid for update;
        end loop;
    end if;
    -- every broker forgets what it keeps of the queue's groups (a ring holding a partition under
    -- a lease of this queue, the first-contact marker): a queue made again by the next push
    -- answered a pop right after that push 204 until the next reseed
    perform queen.group_reset_note_v1(p_name, g.consumer_group)
       from (select m.consumer_group from queen.consumer_groups_metadata m where m.queue_id = v_id
             union
             select '__QUEUE_MODE__') g;
    delete from queen.queues q where q.id = v_id;
    return found;
end;
$$;

-- One page of a queue delete's partitions: the next p_limit in id order after p_after, locked in
-- that order (as pushes and retention's pages take them) and removed with what cascades from them
-- (cursors, transactionId index, traces, stream state, and what was pushed since the clear). So the
-- final queue_delete_v1 holds the few a push made again meanwhile: in one transaction, a queue of a
-- million partitions held its pushes for minutes and HOT pruning everywhere. Returns how many were
-- removed and the last id (null when none was left).
create or replace function queen.queue_delete_partitions_v1(p_queue_id uuid, p_after uuid,
                                                            p_limit integer)
returns table (removed integer, last_id uuid)
language plpgsql
as $$
declare
    v_ids uuid[];
    v_pid uuid;
begin
    select coalesce(array_agg(x.id order by x.id), '{}') into v_ids
      from (select p.id from queen.log_partitions p
             where p.queue_id = p_queue_id
               and p.id > coalesce(p_after, '00000000-0000-0000-0000-000000000000'::uuid)
             order by p.id
             limit p_limit) x;
    if cardinality(v_ids) = 0 then
        return query select 0, null::uuid;
        return;
    end if;
    if not queen.distributed() then
        perform 1 from queen.log_partitions p where p.id = any (v_ids) order by p.id for update;
    else
        foreach v_pid in array v_ids loop
            perform 1 from queen.log_partitions p where p.id = v_pid for update;
        end loop;
    end if;
    delete from queen.log_partitions p where p.id = any (v_ids);
    return query select cardinality(v_ids), v_ids[cardinality(v_ids)];
end;
$$;

-- One row per queue, newest first, counted as a queue's detail counts its partitions
-- (queen.queue_partitions_v2): the retained messages (retention and clears deleted the rest),
-- pending and processing by the queue-mode cursor (__QUEUE_MODE__), or the slowest consumer
-- group's where only groups read the partition. Before, every message ever pushed was counted,
-- and a queue read only by groups showed all of it as pending.
create or replace function queen.queue_list_v1()
returns table (id uuid, name text, namespace text, task text, created_at timestamptz,
               partitions bigint, total bigint, pending bigint, processing bigint)
language plpgsql
stable
as $$
#variable_conflict use_column
declare
    -- a variable, not now() in the lateral below: Citus takes only immutable functions there
    v_now timestamptz := now();
begin
    return query
    select q.id, q.name, q.namespace, q.task, q.created_at,
           count(p.id),
           coalesce(sum(t.total), 0)::bigint,
           coalesce(sum(greatest(t.total - t.completed - t.leased, 0)), 0)::bigint,
           coalesce(sum(t.leased), 0)::bigint
      from queen.queues q
      left join queen.log_partitions p on p.queue_id = q.id
      left join queen.log_consumers qm
             on qm.partition_id = p.id and qm.consumer_group = '__QUEUE_MODE__'
      left join lateral (select c.committed, c.batch_end, c.lease_expires_at, c.worker_id
                           from queen.log_consumers c
                          where c.partition_id = p.id
                          order by c.committed
                          limit 1) slow on true
      left join lateral (
          select p.last_offset + 1 - p.retained_from as total,
                 greatest(coalesce(qm.committed, slow.committed, -1) + 1 - p.retained_from, 0)
                     as completed,
                 case when qm.partition_id is not null
                      then case when qm.lease_expires_at > v_now and qm.worker_id is not null
                                then greatest(qm.batch_end - qm.committed, 0) else 0 end
                      when slow.lease_expires_at > v_now and slow.worker_id is not null
                      then greatest(slow.batch_end - slow.committed, 0) else 0 end as leased) t
             on true
     group by q.id
     order by q.created_at desc, q.name;
end;
$$;

-- One row per (consumer group, queue) with its lag: the groups of queen.consumer_groups_metadata
-- (every group that popped has its row) and any other with cursors. A partition lags when its head
-- is past the group's cursor, counted from the oldest retained message (retention or a clear
-- deleted the rest), and a partition the group has no cursor on yet counts from where its first
-- pop would start it: its whole retained log, or what came after the group's subscription time
-- (a group whose consumers died reported a new partition's backlog as no lag at all). The time
-- lag (the age of the oldest uncommitted message) comes from the statistics snapshot
-- (queen.group_stats, refreshed every QUEEN_STATS_INTERVAL_MS): computing it here would probe the
-- segments of every lagging cursor on every request.
create or replace function queen.consumer_groups_v1()
returns table (consumer_group text, queue_name text, members bigint, partitions_with_lag bigint,
               total_lag bigint, max_time_lag_seconds bigint, last_consumed_at timestamptz,
               subscription_mode text, subscription_timestamp timestamptz,
               subscription_created_at timestamptz)
language plpgsql
stable
-- an estimate of millions of pairs compiled the query for a second, as long as it runs
set jit = off
as $$
#variable_conflict use_column
declare
    v_ids    uuid[] := '{}';
    v_groups text[] := '{}';
    v_starts bigint[] := '{}';
    r        record;
begin
    -- a partition without the group's cursor that a group subscribed at a time would start in its
    -- middle (made before that time, written since): log_seek_v1, one partition per statement
    for r in
        select p.id, m.consumer_group, m.subscription_timestamp as ts, p.last_offset
          from queen.consumer_groups_metadata m
          join queen.log_partitions p on p.queue_id = m.queue_id
         where m.subscription_timestamp is not null
           and m.consumer_group <> '__QUEUE_MODE__'
           and p.created_at < m.subscription_timestamp
           and p.newest_created_at >= m.subscription_timestamp
           and not exists (select 1 from queen.log_consumers c
                            where c.partition_id = p.id and c.consumer_group = m.consumer_group)
    loop
        v_ids := v_ids || r.id;
        v_groups := v_groups || r.consumer_group;
        v_starts := v_starts || queen.log_seek_v1(r.id, r.ts, r.last_offset);
    end loop;
    return query
    with groups as (
        select m.queue_id, m.consumer_group, m.subscription_mode, m.subscription_timestamp,
               m.created_at
          from queen.consumer_groups_metadata m
        union
        select p.queue_id, c.consumer_group, null::text, null::timestamptz, null::timestamptz
          from queen.log_consumers c
          join queen.log_partitions p on p.id = c.partition_id
         where not exists (select 1 from queen.consumer_groups_metadata m
                            where m.queue_id = p.queue_id and m.consumer_group = c.consumer_group)),
    seeks as (
        select * from unnest(v_ids, v_groups, v_starts) as x(partition_id, consumer_group, start)),
    per_partition as (
        select g.queue_id, g.consumer_group, c.partition_id as cursor, c.last_consumed_at,
               greatest(p.last_offset - greatest(
                   case when c.partition_id is not null then c.committed
                        -- where log_seed_cursor_v1 starts it
                        when g.subscription_timestamp is null
                          or g.consumer_group = '__QUEUE_MODE__'
                          or p.created_at >= g.subscription_timestamp then -1
                        when p.newest_created_at is null
                          or p.newest_created_at < g.subscription_timestamp then p.last_offset
                        else coalesce(sk.start, p.last_offset) end,
                   p.retained_from - 1), 0) as lag
          from groups g
          join queen.log_partitions p on p.queue_id = g.queue_id
          left join queen.log_consumers c
                 on c.partition_id = p.id and c.consumer_group = g.consumer_group
          left join seeks sk
                 on sk.partition_id = p.id and sk.consumer_group = g.consumer_group),
    -- summed per group before anything is joined to it: sorting every (group, partition) pair
    -- was most of the time at 100,000 partitions
    per_group as (
        select pp.queue_id, pp.consumer_group, count(pp.cursor) as members,
               count(*) filter (where pp.lag > 0) as lagging, coalesce(sum(pp.lag), 0) as lag,
               max(pp.last_consumed_at) as last_consumed_at
          from per_partition pp
         group by pp.queue_id, pp.consumer_group)
    select pg.consumer_group, q.name, pg.members, pg.lagging, pg.lag::bigint,
           coalesce(extract(epoch from now() - gs.oldest_unconsumed_at)::bigint, 0),
           pg.last_consumed_at, g.subscription_mode, g.subscription_timestamp, g.created_at
      from per_group pg
      join groups g on g.queue_id = pg.queue_id and g.consumer_group = pg.consumer_group
      join queen.queues q on q.id = pg.queue_id
      left join queen.group_stats gs
             on gs.queue_id = q.id and gs.consumer_group = pg.consumer_group
     order by q.name, pg.consumer_group;
end;
$$;

-- One bounded step of a queue clear, or of the drain before a queue delete: from partition p_from
-- on, in id order, each partition locked in turn as a push locks it, the segments created before
-- p_before (null: now; the caller passes the first step's started_at to the next) deleted, at most
-- p_max_segments in all, each partition visited counting as one at least, and at most p_max_bytes
-- of segments (null: no bound) but at least one segment. A partition's watermark
-- moves past what was deleted, as retention's does; one left with nothing also loses its
-- transactionId index and traces. Offsets stay: cursors behind continue at the next message
-- pushed. Returns the queue's id (null: no such queue), the partitions done, the messages deleted,
-- where the next step starts (null: done), and the step's p_before; p_queue_id, when given, names
-- the queue instead of p_queue. In one transaction a big
-- queue's clear held every partition lock until its last segment was gone (pushes to it, and
-- flushes merged with them, waited), and its snapshot held back every table's HOT pruning
-- meanwhile; the cutoff keeps a partition pushed to faster than steps delete from being chased
-- for ever; the byte bound keeps a step of big segments short, as retention's.
create or replace function queen.queue_clear_page_v2(
    p_queue text, p_partition text, p_from uuid, p_max_segments integer,
    p_before timestamptz, p_queue_id uuid, p_max_bytes bigint)
returns table (queue_id uuid, partitions integer, messages bigint, resume_from uuid,
               started_at timestamptz)
language plpgsql
as $$
#variable_conflict use_column
declare
    v_before timestamptz := coalesce(p_before, now());
    v_qid    uuid;
    v_parts  integer := 0;
    v_msgs   bigint := 0;
    v_left   integer := greatest(p_max_segments, 1);
    v_n      integer;
    v_seen   integer;
    v_to     bigint;
    v_size   bigint;
    v_bytes  bigint := 0;
    v_pid    uuid;
    p        record;
begin
    -- by its id once the first step found it: a queue deleted and pushed to again meanwhile is
    -- another queue
    if p_queue_id is null then
        select q.id into v_qid from queen.queues q where q.name = p_queue;
    else
        select q.id into v_qid from queen.queues q where q.id = p_queue_id;
    end if;
    if v_qid is null then
        return query select null::uuid, 0, 0::bigint, null::uuid, v_before;
        return;
    end if;
    if p_before is null then
        -- a push's created_at never goes back (see R__20), not even with the clock: one stored
        -- before the clear began may be dated after its now()
        select greatest(v_before, max(lp.newest_created_at)) into v_before
          from queen.log_partitions lp
         where lp.queue_id = v_qid
           and (p_partition is null or lp.id = queen.partition_uuid(v_qid, p_partition));
        v_before := v_before + interval '1 microsecond';
    end if;
    for v_pid in
        select lp.id
          from queen.log_partitions lp
         where lp.queue_id = v_qid
           and (p_partition is null or lp.id = queen.partition_uuid(v_qid, p_partition))
           and (p_from is null or lp.id >= p_from)
         order by lp.id
    loop
        if v_left <= 0 or v_bytes >= p_max_bytes then
            return query select v_qid, v_parts, v_msgs, v_pid, v_before;
            return;
        end if;
        -- no key update, as a push's: a dead-lettering ack's key share (taken without waiting)
        -- passes, and waits on nothing
        select lp.id, lp.last_offset, lp.retained_from into p
          from queen.log_partitions lp where lp.id = v_pid
           for no key update;
        continue when not found;
        -- the oldest segments within the step's byte budget, but at least its first: 1,000
        -- segments of 1 MB in one transaction held a push to the partition 2.2 s
        select count(*) filter (where t.fits), max(t.base_offset + t.msg_count) filter (where t.fits),
               coalesce(sum(t.size) filter (where t.fits), 0), count(*)
          into v_n, v_to, v_size, v_seen
          from (select s.base_offset, s.msg_count, s.size,
                       coalesce(v_bytes + sum(s.size) over w <= p_max_bytes, true)
                       or (v_bytes = 0 and row_number() over w = 1) as fits
                  from (select ls.base_offset, ls.msg_count, octet_length(ls.blob) as size
                          from queen.log_segments ls
                         where ls.partition_id = p.id and ls.created_at < v_before
                         order by ls.base_offset
                         limit v_left) s
                window w as (order by s.base_offset)) t;
        v_left := v_left - greatest(v_n, 1);
        v_bytes := v_bytes + v_size;
        if v_n > 0 then
            delete from queen.log_segments ls where ls.partition_id = p.id and ls.base_offset < v_to;
            delete from queen.message_traces t where t.partition_id = p.id and t.msg_offset < v_to;
            update queen.log_partitions lp set retained_from = greatest(lp.retained_from, v_to)
             where lp.id = p.id;
            v_msgs := v_msgs + greatest(v_to - p.retained_from, 0);
        end if;
        if v_n < v_seen
           or (v_left <= 0
               and exists (select 1 from queen.log_segments ls
                            where ls.partition_id = p.id and ls.created_at < v_before)) then
            -- more behind the budget: the next step goes on from this partition
            return query select v_qid, v_parts, v_msgs, p.id, v_before;
            return;
        end if;
        if coalesce(v_to, p.retained_from) > p.last_offset then
            -- nothing retained: every index entry and trace of the partition is dead
            delete from queen.log_txn_index t where t.partition_id = p.id;
            delete from queen.message_traces t where t.partition_id = p.id;
        end if;
        v_parts := v_parts + 1;
    end loop;
    return query select v_qid, v_parts, v_msgs, null::uuid, v_before;
end;
$$;

-- queue_clear_page_v2 without a byte bound: the brokers of releases before v2 call it.
create or replace function queen.queue_clear_page_v1(
    p_queue text, p_partition text, p_from uuid, p_max_segments integer,
    p_before timestamptz default null, p_queue_id uuid default null)
returns table (queue_id uuid, partitions integer, messages bigint, resume_from uuid,
               started_at timestamptz)
language sql
as $$
    select * from queen.queue_clear_page_v2(p_queue, p_partition, p_from, p_max_segments,
                                            p_before, p_queue_id, null);
$$;

-- Deletes every message of a queue, or of one of its partitions, as retention would (segments,
-- transactionId index, traces), keeping offsets: cursors behind continue at the next message
-- pushed. Dead letters stay. Returns the partitions cleared and the messages deleted; queue_found
-- false for an unknown queue. The whole clear as one page, in one transaction: brokers of releases
-- before queue_clear_page_v1 call it.
create or replace function queen.queue_clear_v1(p_queue text, p_partition text)
returns table (queue_found boolean, partitions integer, messages bigint)
language sql
as $$
    select c.queue_id is not null, c.partitions, c.messages
      from queen.queue_clear_page_v1(p_queue, p_partition, null, 2147483647) c;
$$;
