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

-- One row per (consumer group, queue) with its lag. A partition lags when its head is past the
-- group's cursor. The time lag (the age of the oldest uncommitted message) comes from the
-- statistics snapshot (queen.group_stats, refreshed every QUEEN_STATS_INTERVAL_MS): computing it
-- here would probe the segments of every lagging cursor on every request.
create or replace function queen.consumer_groups_v1()
returns table (consumer_group text, queue_name text, members bigint, partitions_with_lag bigint,
               total_lag bigint, max_time_lag_seconds bigint, last_consumed_at timestamptz,
               subscription_mode text, subscription_timestamp timestamptz,
               subscription_created_at timestamptz)
language plpgsql
stable
as $$
#variable_conflict use_column
begin
    return query
    select c.consumer_group, q.name,
           count(*),
           count(*) filter (where p.last_offset > c.committed),
           coalesce(sum(greatest(p.last_offset - c.committed, 0)), 0)::bigint,
           coalesce(max(extract(epoch from now() - gs.oldest_unconsumed_at))::bigint, 0),
           max(c.last_consumed_at),
           m.subscription_mode, m.subscription_timestamp, m.created_at
      from queen.log_consumers c
      join queen.log_partitions p on p.id = c.partition_id
      join queen.queues q on q.id = p.queue_id
      left join queen.consumer_groups_metadata m
             on m.queue_id = q.id and m.consumer_group = c.consumer_group
      left join queen.group_stats gs
             on gs.queue_id = q.id and gs.consumer_group = c.consumer_group
     group by c.consumer_group, q.name, m.subscription_mode, m.subscription_timestamp, m.created_at
     order by q.name, c.consumer_group;
end;
$$;
