-- Operator views and the queue delete. Counts are computed live from partition heads and cursors;
-- the consumer groups' time lag comes from the statistics snapshot.

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
    delete from queen.queues q where q.id = v_id;
    return found;
end;
$$;

-- One row per queue, newest first. pending and processing are those of the queue-mode cursors
-- (__QUEUE_MODE__): what no queue-mode consumer has acked, and what is leased right now.
create or replace function queen.queue_list_v1()
returns table (id uuid, name text, namespace text, task text, created_at timestamptz,
               partitions bigint, total bigint, pending bigint, processing bigint)
language plpgsql
stable
as $$
#variable_conflict use_column
begin
    return query
    select q.id, q.name, q.namespace, q.task, q.created_at,
           count(p.id),
           coalesce(sum(p.last_offset + 1), 0)::bigint,
           coalesce(sum(p.last_offset - coalesce(c.committed, -1) - l.leased), 0)::bigint,
           coalesce(sum(l.leased), 0)::bigint
      from queen.queues q
      left join queen.log_partitions p on p.queue_id = q.id
      left join queen.log_consumers c
             on c.partition_id = p.id and c.consumer_group = '__QUEUE_MODE__'
      cross join lateral (
          select case when c.lease_expires_at > now()
                      then greatest(c.batch_end - c.committed, 0) else 0 end as leased) l
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
