-- Queues and partitions: configuration and the lazy creation that pushes rely on.

-- Create or replace a queue's options (a full replace, as Queen's configure is), and make sure its
-- Default partition exists. Keys absent from p_options take the column defaults, except
-- minPopWaitTime, which keeps its stored value: Queen's clients never send it, and
-- encryptionEnabled, which only a caller that p_may_disable_encryption names switches off: decided
-- here, on the row as stored, not on a broker's copy of it, which another broker's configure may
-- have overtaken. was_encrypted: as it was before.
create or replace function queen.configure_queue_v2(
    p_name text, p_namespace text, p_task text, p_options jsonb, p_may_disable_encryption boolean)
returns table (queue queen.queues, default_partition_id uuid, was_encrypted boolean)
language plpgsql
as $$
#variable_conflict use_column
declare
    v_queue queen.queues;
    v_pid   uuid;
    v_was   boolean;
begin
    -- no key update: a push creating the Default partition checks its queue by a key share lock,
    -- which for update blocked while this inserted the same partition (a deadlock)
    select q.encryption_enabled into v_was from queen.queues q where q.name = p_name
       for no key update;
    insert into queen.queues as q (
        name, namespace, task, lease_time, retry_limit, retry_delay, priority, max_size, ttl,
        dead_letter_queue, dlq_after_max_retries, delayed_processing, window_buffer,
        retention_enabled, retention_seconds, completed_retention_seconds, max_wait_time_seconds,
        encryption_enabled, min_pop_wait_time)
    values (
        p_name, coalesce(p_namespace, ''), coalesce(p_task, ''),
        coalesce((p_options ->> 'leaseTime')::integer, 300),
        coalesce((p_options ->> 'retryLimit')::integer, 3),
        coalesce((p_options ->> 'retryDelay')::integer, 1000),
        coalesce((p_options ->> 'priority')::integer, 0),
        coalesce((p_options ->> 'maxSize')::integer, 0),
        coalesce((p_options ->> 'ttl')::integer, 3600),
        coalesce((p_options ->> 'deadLetterQueue')::boolean, false),
        coalesce((p_options ->> 'dlqAfterMaxRetries')::boolean, false),
        coalesce((p_options ->> 'delayedProcessing')::integer, 0),
        coalesce((p_options ->> 'windowBuffer')::integer, 0),
        coalesce((p_options ->> 'retentionEnabled')::boolean, false),
        coalesce((p_options ->> 'retentionSeconds')::integer, 0),
        coalesce((p_options ->> 'completedRetentionSeconds')::integer, 0),
        coalesce((p_options ->> 'maxWaitTimeSeconds')::integer, 0),
        coalesce((p_options ->> 'encryptionEnabled')::boolean, false),
        coalesce((p_options ->> 'minPopWaitTime')::integer, 0))
    on conflict (name) do update set
        namespace = excluded.namespace,
        task = excluded.task,
        lease_time = excluded.lease_time,
        retry_limit = excluded.retry_limit,
        retry_delay = excluded.retry_delay,
        priority = excluded.priority,
        max_size = excluded.max_size,
        ttl = excluded.ttl,
        dead_letter_queue = excluded.dead_letter_queue,
        dlq_after_max_retries = excluded.dlq_after_max_retries,
        delayed_processing = excluded.delayed_processing,
        window_buffer = excluded.window_buffer,
        retention_enabled = excluded.retention_enabled,
        retention_seconds = excluded.retention_seconds,
        completed_retention_seconds = excluded.completed_retention_seconds,
        max_wait_time_seconds = excluded.max_wait_time_seconds,
        encryption_enabled = excluded.encryption_enabled
                             or (q.encryption_enabled and not p_may_disable_encryption),
        min_pop_wait_time = case when p_options ? 'minPopWaitTime'
                                 then excluded.min_pop_wait_time else q.min_pop_wait_time end,
        updated_at = excluded.updated_at
    returning q.* into v_queue;

    v_pid := queen.partition_uuid(v_queue.id, 'Default');
    insert into queen.log_partitions (id, queue_id, name) values (v_pid, v_queue.id, 'Default')
    on conflict (id) do nothing;

    return query select v_queue, v_pid, coalesce(v_was, false);
end;
$$;

-- configure_queue_v2 as the build before called it, kept for its brokers during a rolling upgrade
-- (operations.md): they decide no role, so their configure switches encryption as it says.
create or replace function queen.configure_queue_v1(
    p_name text, p_namespace text, p_task text, p_options jsonb)
returns table (queue queen.queues, default_partition_id uuid)
language sql
as $$
    select c.queue, c.default_partition_id
      from queen.configure_queue_v2(p_name, p_namespace, p_task, p_options, true) c;
$$;

-- Resolve (queue, partition) names to ids, creating what is missing. Called in its own short
-- transaction before a push, never inside it: a creating insert that other pushers wait on must
-- commit at once, or every concurrent pusher of a new partition would convoy behind the whole push.
-- Inserts run in name order so that two creators of overlapping sets cannot deadlock.
create or replace function queen.log_ensure_partitions_v1(p_queues text[], p_partitions text[])
returns table (queue_name text, partition_name text, queue_id uuid, partition_id uuid)
language plpgsql
-- no JIT: default row estimates over arrays trip it for statements that run in a millisecond
set jit = off
as $$
#variable_conflict use_column
declare
    r record;
begin
    -- auto-created queues derive namespace and task from a dotted name, as Queen does; written
    -- only when one is missing (on Citus a write to queues goes to every node)
    if exists (select 1 from unnest(p_queues) as n(name)
                where not exists (select 1 from queen.queues q where q.name = n.name)) then
        insert into queen.queues (name, namespace, task)
        select n.name, split_part(n.name, '.', 1), split_part(n.name, '.', 2)
          from (select distinct unnest(p_queues) as name) n
         where not exists (select 1 from queen.queues q where q.name = n.name)
         order by n.name
        on conflict (name) do nothing;
    end if;

    -- one insert per partition, by its derived id: on Citus each goes to the partition's worker
    -- alone, where one statement for all of them would lock every shard of the table
    for r in
        select q.id as qid, w.qname, w.pname, queen.partition_uuid(q.id, w.pname) as pid
          from (select distinct u.qname, u.pname
                  from unnest(p_queues, p_partitions) as u(qname, pname)) w
          join queen.queues q on q.name = w.qname
         order by 4
    loop
        -- ids in sorted order: two creators of overlapping sets cannot deadlock
        perform 1 from queen.log_partitions p where p.id = r.pid;
        if not found then
            insert into queen.log_partitions (id, queue_id, name) values (r.pid, r.qid, r.pname)
            on conflict (id) do nothing;
        end if;
        queue_name := r.qname;
        partition_name := r.pname;
        queue_id := r.qid;
        partition_id := r.pid;
        return next;
    end loop;
end;
$$;
