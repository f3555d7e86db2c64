-- Streams: query registration, the state and ack steps of a cycle, state reads.

-- Registers a query by name. The same hash answers the registered id (fresh = false); another
-- hash is refused (registered_hash names the stored one) unless p_reset, which replaces the
-- hash, the queues, and deletes the query's state. The stored queues come back with the answer.
drop function if exists queen.streams_register_v1(text, text, text, text, boolean);

create or replace function queen.streams_register_v1(
    p_name text, p_source text, p_sink text, p_hash text, p_reset boolean)
returns table (query_id uuid, fresh boolean, was_reset boolean, registered_hash text,
               source_queue text, sink_queue text)
language plpgsql
as $$
#variable_conflict use_column
declare
    q     queen.stream_queries;
    v_now timestamptz := now();
begin
    insert into queen.stream_queries (id, name, source_queue, sink_queue, config_hash,
                                      created_at, updated_at)
    values (gen_random_uuid(), p_name, p_source, p_sink, p_hash, v_now, v_now)
    on conflict (name) do nothing
    returning * into q;
    if found then
        return query select q.id, true, false, q.config_hash, q.source_queue, q.sink_queue;
        return;
    end if;
    select * into q from queen.stream_queries s where s.name = p_name;
    if p_reset then
        -- waits for the cycles in flight, which hold this lock shared, and keeps new ones out
        perform pg_advisory_xact_lock(hashtextextended(q.id::text, 49));
        select * into q from queen.stream_queries s where s.id = q.id for update;
    end if;
    if not p_reset then
        return query select q.id, false, false, q.config_hash, q.source_queue, q.sink_queue;
    else
        delete from queen.stream_state s where s.query_id = q.id;
        update queen.stream_queries s
           set config_hash = p_hash, source_queue = p_source, sink_queue = p_sink,
               updated_at = v_now
         where s.id = q.id;
        return query select q.id, false, true, p_hash, p_source, p_sink;
    end if;
end;
$$;

-- The first step of a cycle: serialises cycles of one (query, partition), checks that the
-- partition belongs to the query's source queue, and applies the state operations in order
-- (a null value deletes the key). Answers the source queue's name, or, having changed nothing,
-- what is wrong.
create or replace function queen.streams_cycle_state_v1(
    p_query uuid, p_partition uuid, p_keys text[], p_values jsonb[])
returns table (source_queue text, error text)
language plpgsql
as $$
#variable_conflict use_column
declare
    v_source text;
    v_queue  text;
    v_now    timestamptz := now();
begin
    -- two cycles of one (query, partition) never interleave: the second waits for the first
    perform pg_advisory_xact_lock(hashtextextended(p_query::text || '/' || p_partition::text, 48));
    -- the parents are locked before any state row: a reset or a queue delete, which lock the
    -- parent and then delete state, waits for the cycle instead of deadlocking with it. The query
    -- by a shared advisory lock, not a row lock: on Citus a row lock on a reference table locks
    -- its copy on every node, and concurrent cycles deadlocked across nodes
    perform pg_advisory_xact_lock_shared(hashtextextended(p_query::text, 49));
    select s.source_queue into v_source from queen.stream_queries s where s.id = p_query;
    if not found then
        return query select null::text, 'Unknown query_id ' || p_query;
        return;
    end if;
    select q.name into v_queue
      from queen.log_partitions p join queen.queues q on q.id = p.queue_id
     where p.id = p_partition
       for key share of p;
    if not found then
        return query select null::text, 'Unknown partition_id ' || p_partition;
        return;
    end if;
    if v_queue <> v_source then
        return query select null::text,
            'partition_id ' || p_partition || ' belongs to queue ' || v_queue
            || ', not to the query''s source queue ' || v_source;
        return;
    end if;
    for i in 1 .. coalesce(array_length(p_keys, 1), 0) loop
        if p_values[i] is null then
            delete from queen.stream_state s
             where s.query_id = p_query and s.partition_id = p_partition and s.key = p_keys[i];
        else
            insert into queen.stream_state (query_id, partition_id, key, value, updated_at)
            values (p_query, p_partition, p_keys[i], p_values[i], v_now)
            on conflict (query_id, partition_id, key)
            do update set value = excluded.value, updated_at = excluded.updated_at;
        end if;
    end loop;
    return query select v_queue, null::text;
end;
$$;

-- The ack of a cycle, checked against the lease: live, of the cycle's consumer group, and naming
-- a message of the leased batch that is not acknowledged yet. A message at or below the cursor,
-- or acked already, is refused, never a no-op: a cycle sent again after its answer was lost must
-- not apply its state and pushes twice.
--
-- completed (or success) is positional: the message and every earlier message of the batch are
-- consumed (the cursor moves to it). The lease ends when the ack reaches the batch's end or
-- p_release asks for it (the rest of the batch is then delivered again from the cursor); else it
-- stays with the worker for its next cycle. Any other status changes nothing here: the caller
-- applies it with queen.log_ack_v1 at the returned offset, in the same transaction.
--
-- p_offset, when the caller read it from the frames, is the message's offset; else the
-- transactionId index finds it among the lease's messages, raising QN003 when the hash names
-- several.
drop function if exists queen.streams_ack_v1(uuid, text, uuid, text, bigint, boolean);

-- consumed: the messages the ack consumed (a completed one the whole prefix up to it, any other
-- status its message), which the broker's statistics count: counted as one ack, a cycle over a
-- batch of 200 showed a two-hundredth of what the stream consumed
create or replace function queen.streams_ack_v2(
    p_partition uuid, p_group text, p_lease uuid, p_txn text, p_offset bigint, p_status text,
    p_release boolean)
returns table (success boolean, error text, msg_offset bigint, lease_ended boolean,
               has_more boolean, queue_name text, partition_name text, consumed bigint)
language plpgsql
as $$
#variable_conflict use_column
declare
    cur      queen.log_consumers;
    p        queen.log_partitions;
    v_now    timestamptz := now();
    v_off    bigint;
    v_to     bigint;
    v_off_at timestamptz;
    v_n      bigint;
    v_end    boolean;
    v_queue  text;
begin
    select * into p from queen.log_partitions lp where lp.id = p_partition;
    select q.name into v_queue from queen.queues q where q.id = p.queue_id;
    select * into cur from queen.log_consumers c
     where c.partition_id = p_partition and c.worker_id = p_lease
       for update;
    if not found or cur.lease_expires_at <= v_now then
        return query select false, 'Invalid or expired lease', null::bigint, false, false,
                            v_queue, p.name, 0::bigint;
        return;
    end if;
    if cur.consumer_group <> p_group then
        return query select false, 'The lease belongs to consumer group ' || cur.consumer_group,
                            null::bigint, false, false, v_queue, p.name, 0::bigint;
        return;
    end if;
    if p_offset is not null then
        v_off := nullif(p_offset, -1);
    else
        select min(o.off), count(*) into v_off, v_n
          from queen.log_txn_offsets_v1(p_partition, queen.txn_hash(p_txn), p.retained_from) as o(off)
         where o.off > cur.committed and o.off <= cur.batch_end;
        if v_n > 1 then
            raise exception using errcode = 'QN003', message = 'ambiguous transaction id';
        end if;
    end if;
    if v_off is null or v_off <= cur.committed or v_off > cur.batch_end
       or v_off = any (coalesce(cur.acked_offsets, '{}')) then
        return query select false, 'Message is not an unacknowledged part of this lease',
                            null::bigint, false, false, v_queue, p.name, 0::bigint;
        return;
    end if;
    if p_status not in ('completed', 'success') then
        return query select true, null::text, v_off, false, false, v_queue, p.name, 1::bigint;
        return;
    end if;
    -- offsets just above already acked (a later message dead-lettered by an earlier cycle) join
    -- the prefix, as log_ack_v1 takes them: left out, the lease stayed on a batch acked whole, or
    -- its release sent the dead-lettered message out again, to be processed a second time
    v_to := v_off;
    while v_to + 1 = any (coalesce(cur.acked_offsets, '{}')) loop
        v_to := v_to + 1;
    end loop;
    v_end := p_release or v_to >= cur.batch_end;
    -- dated here, not in the UPDATE: Citus refuses a stable function of a column there
    v_off_at := queen.log_cursor_offset_at_v1(cur, v_to);
    update queen.log_consumers c
       set committed = v_to,
           committed_at = v_off_at,
           worker_id = case when v_end then null else c.worker_id end,
           lease_expires_at = case when v_end then null else c.lease_expires_at end,
           lease_acquired_at = case when v_end then null else c.lease_acquired_at end,
           batch_end = case when v_end then null else c.batch_end end,
           acked_offsets = case when v_end then null
                                else (select array_agg(a order by a)
                                        from unnest(c.acked_offsets) a where a > v_to) end,
           -- like a completed batch: the budget resets once the cursor passes the failed range
           retry_count = case when c.retry_end is null or v_to >= c.retry_end then 0
                              else c.retry_count end,
           retry_end = case when c.retry_end is null or v_to >= c.retry_end then null
                            else c.retry_end end,
           total_consumed = c.total_consumed + (v_to - cur.committed),
           last_consumed_at = v_now,
           -- released short of its batch: the rest goes out again (V18)
           redelivered_to = greatest(c.redelivered_to,
                                     case when v_end and v_to < c.batch_end then c.batch_end end)
     where c.partition_id = cur.partition_id and c.consumer_group = cur.consumer_group;
    if v_end and v_to < cur.batch_end then
        -- released short of its batch, the rest goes out again: what this lease dead-lettered there
        -- is no dead letter too (processed twice, a third time after a requeue), as on the ack route
        delete from queen.dead_letters d
         where d.partition_id = cur.partition_id and d.consumer_group = cur.consumer_group
           and d.msg_offset > v_to and d.msg_offset <= cur.batch_end
           and d.msg_offset = any (coalesce(cur.acked_offsets, '{}')) and d.leased;
    end if;
    -- counted from the cursor or retention's start, whichever is later (what time retention
    -- deleted below it is not counted, read or not), less the offsets acked already (a later
    -- message dead-lettered by an earlier cycle), which were counted by their own acks
    return query select true, null::text, v_off, v_end, v_end and v_to < p.last_offset,
                        v_queue, p.name,
                        greatest(v_to - greatest(cur.committed, p.retained_from - 1)
                                 - (select count(*) from unnest(coalesce(cur.acked_offsets, '{}')) a
                                     where a > greatest(cur.committed, p.retained_from - 1)
                                       and a <= v_to), 0);
end;
$$;

-- The current values of the state of (query, partition) in key order, narrowed as Queen's runners
-- ask: to the keys asked (none: every key; their idle flush and their cycles ask for none), to those
-- starting with p_prefix, and to windows ripe by p_ripe_before (epoch ms; a value whose windowEnd
-- is a number at most that). Answering none for no keys, the runners restarted every window at each
-- cycle and never closed one.
create or replace function queen.streams_state_get_v2(
    p_query uuid, p_partition uuid, p_keys text[], p_prefix text, p_ripe_before numeric)
returns table (key text, value jsonb, updated_at timestamptz)
language plpgsql
stable
as $$
#variable_conflict use_column
begin
    return query
    select s.key, s.value, s.updated_at
      from queen.stream_state s
     where s.query_id = p_query and s.partition_id = p_partition
       and (p_keys is null or cardinality(p_keys) = 0 or s.key = any (p_keys))
       and (p_prefix is null or starts_with(s.key, p_prefix))
       -- a case: the cast of a windowEnd that is no number is never evaluated
       and (p_ripe_before is null
            or case when jsonb_typeof(s.value -> 'windowEnd') = 'number'
                    then (s.value ->> 'windowEnd')::numeric <= p_ripe_before
                    else false end)
     order by s.key;
end;
$$;

-- The brokers of releases before v2 call these during a rolling upgrade.
create or replace function queen.streams_ack_v1(
    p_partition uuid, p_group text, p_lease uuid, p_txn text, p_offset bigint, p_status text,
    p_release boolean)
returns table (success boolean, error text, msg_offset bigint, lease_ended boolean,
               has_more boolean, queue_name text, partition_name text)
language sql
as $$
    select a.success, a.error, a.msg_offset, a.lease_ended, a.has_more, a.queue_name,
           a.partition_name
      from queen.streams_ack_v2(p_partition, p_group, p_lease, p_txn, p_offset, p_status,
                                p_release) a;
$$;

create or replace function queen.streams_state_get_v1(p_query uuid, p_partition uuid, p_keys text[])
returns table (key text, value jsonb, updated_at timestamptz)
language sql
stable
as $$
    select g.key, g.value, g.updated_at
      from queen.streams_state_get_v2(p_query, p_partition, p_keys, null, null) g;
$$;
