-- Dead letters: listing, requeue, and the maxWaitTimeSeconds sweep.

-- A page of the dead letters matching the filters (null matches anything), newest first, ties
-- broken by partition and group so that pages follow on. The page ends with the letter whose
-- payload crosses p_max_bytes (QUEEN_POP_MAX_BYTES), at least one letter: a page of big payloads
-- (1,000 of 10 MiB) would not fit the broker's heap. plpgsql, as the count below: a SQL function
-- reading the tables would read Citus's empty shell tables (SchemaRulesTest).
drop function if exists queen.dead_letters_matching(text, text, text, timestamptz, timestamptz);
drop function if exists queen.dead_letters_v1(text, text, text, timestamptz, timestamptz, integer,
                                              integer);

create or replace function queen.dead_letters_v1(
    p_queue text, p_group text, p_partition text, p_from timestamptz, p_to timestamptz,
    p_limit integer, p_offset integer, p_max_bytes bigint default null)
returns table (partition_id uuid, partition_name text, queue_name text, consumer_group text,
               msg_offset bigint, message_id uuid, transaction_id text, trace_id uuid,
               producer_sub text, flags smallint, payload bytea, error_message text,
               retry_count integer, created_at timestamptz, failed_at timestamptz)
language plpgsql
stable
as $$
#variable_conflict use_column
declare
    v_bytes bigint := 0;
begin
    for partition_id, partition_name, queue_name, consumer_group, msg_offset, message_id,
        transaction_id, trace_id, producer_sub, flags, payload, error_message, retry_count,
        created_at, failed_at in
        select d.partition_id, p.name, q.name, d.consumer_group, d.msg_offset, d.message_id,
               d.transaction_id, d.trace_id, d.producer_sub, d.flags, d.payload, d.error_message,
               d.retry_count, d.created_at, d.failed_at
          from queen.dead_letters d
          join queen.log_partitions p on p.id = d.partition_id
          join queen.queues q on q.id = p.queue_id
         where (p_queue is null or q.name = p_queue)
           and (p_group is null or d.consumer_group = p_group)
           and (p_partition is null or p.name = p_partition)
           and (p_from is null or d.failed_at >= p_from)
           and (p_to is null or d.failed_at <= p_to)
         order by d.failed_at desc, d.msg_offset desc, d.partition_id, d.consumer_group
         limit p_limit offset p_offset
    loop
        return next;
        v_bytes := v_bytes + octet_length(payload);
        exit when v_bytes >= p_max_bytes;
    end loop;
end;
$$;

-- How many dead letters match the filters of dead_letters_v1.
create or replace function queen.dead_letters_count_v1(
    p_queue text, p_group text, p_partition text, p_from timestamptz, p_to timestamptz)
returns bigint
language plpgsql
stable
as $$
begin
    return (
    select count(*)
      from queen.dead_letters d
      join queen.log_partitions p on p.id = d.partition_id
      join queen.queues q on q.id = p.queue_id
     where (p_queue is null or q.name = p_queue)
       and (p_group is null or d.consumer_group = p_group)
       and (p_partition is null or p.name = p_partition)
       and (p_from is null or d.failed_at >= p_from)
       and (p_to is null or d.failed_at <= p_to));
end;
$$;

-- Requeue: appends a dead-lettered message to its partition again as a one-message segment (the
-- blob the broker built from the dead letter, under a new transactionId p_new_transaction_id) and
-- removes its dead letters, those of every group at p_offset. The original transactionId keeps
-- pointing at the original offset: a group that has not reached it yet must still be able to ack
-- it there. Every consumer group reading the partition sees the copy. Returns the new offset, or
-- null when no dead letter has that transactionId (at p_offset). p_raw_bytes: the blob's decoded
-- size, for the pops' byte budget. Pinned to the offset: a transactionId pushed again once the
-- first message was gone (retention, a clear) may have two dead letters, and a requeue of one
-- deleted the other's.
drop function if exists queen.log_requeue_v1(uuid, text, text, bytea, uuid);
drop function if exists queen.log_requeue_v1(uuid, text, text, bytea);

create or replace function queen.log_requeue_v2(
    p_partition_id uuid, p_transaction_id text, p_new_transaction_id text, p_blob bytea,
    p_raw_bytes integer, p_offset bigint)
returns bigint
language plpgsql
as $$
#variable_conflict use_column
declare
    v_offset   bigint;
    v_at       timestamptz;
    v_retained bigint;
    v_now      timestamptz;
begin
    perform 1 from queen.dead_letters d
      where d.partition_id = p_partition_id and d.transaction_id = p_transaction_id
        and (p_offset is null or d.msg_offset = p_offset)
      limit 1;
    if not found then
        return null;
    end if;
    -- stamped under the partition lock, as a push is (see queen.log_push_v1); into a variable,
    -- because Citus refuses clock_timestamp() inside a distributed UPDATE
    perform 1 from queen.log_partitions p where p.id = p_partition_id for no key update;
    v_now := clock_timestamp();
    update queen.log_partitions p
       set last_offset = p.last_offset + 1,
           newest_created_at = greatest(v_now, p.newest_created_at),
           last_write_at = greatest(p.last_write_at, queen.write_mark(v_now))
     where p.id = p_partition_id
    returning p.last_offset, p.newest_created_at, p.retained_from into v_offset, v_at, v_retained;
    insert into queen.log_segments (partition_id, base_offset, msg_count, created_at, blob, raw_bytes)
    values (p_partition_id, v_offset, 1, v_at, p_blob, p_raw_bytes);
    perform queen.log_txn_add_v1(array[p_partition_id], array[queen.txn_hash(p_new_transaction_id)],
                                 array[v_offset], array[v_retained]);
    delete from queen.dead_letters d
     where d.partition_id = p_partition_id and d.transaction_id = p_transaction_id
       and (p_offset is null or d.msg_offset = p_offset);
    return v_offset;
end;
$$;

-- Brokers of the build before v2, during a rolling upgrade: every dead letter of the transactionId.
create or replace function queen.log_requeue_v1(
    p_partition_id uuid, p_transaction_id text, p_new_transaction_id text, p_blob bytea,
    p_raw_bytes integer)
returns bigint
language sql
as $$
    select queen.log_requeue_v2(p_partition_id, p_transaction_id, p_new_transaction_id, p_blob,
                                p_raw_bytes, null);
$$;

-- The maxWait sweep's turn among the brokers of a database: one sweep per interval between them,
-- and one whose scan took long (1.1-1.3 s at 300,000 backlogged cursors: every 5 s on each of two
-- brokers, 22-24 s of database time a minute) starts 0.9 x ten times its time after the last one
-- began, and at least every 9 minutes. A sweep that outlasts that may overlap the next (it claims
-- cursors with SKIP LOCKED).
create or replace function queen.max_wait_claim_v1(p_interval_ms integer,
                                                   p_now timestamptz default null)
returns boolean
language plpgsql
as $$
declare
    v_took integer;
begin
    -- no queue with a maxWait: no turn, and no write (an idle broker's calls stay as they were)
    if not exists (select 1 from queen.queues q where q.max_wait_time_seconds > 0) then
        return false;
    end if;
    select (s.value ->> 'tookMs')::integer into v_took
      from queen.system_state s where s.key = 'max_wait_sweep';
    return coalesce(queen.periodic_claim_v1(
                        'max_wait_sweep',
                        greatest(p_interval_ms, least(10::bigint * coalesce(v_took, 0), 600000)::integer),
                        p_now),
                    false);
end;
$$;

-- What the claiming broker's last scan took, which spaces the next claims.
create or replace function queen.max_wait_took_v1(p_took_ms integer)
returns void
language sql
as $$
    update queen.system_state s
       set value = jsonb_build_object('tookMs', p_took_ms)
     where s.key = 'max_wait_sweep';
$$;

-- maxWaitTimeSeconds: messages that waited longer than their queue allows are dead-lettered, not
-- silently dropped. Claims cursors like a pop does (SKIP LOCKED, never a live lease), returns the
-- expired slices for the broker to copy into dead letters, and moves each cursor past them, at
-- most p_max_messages per call. Monotone created_at makes the expired messages a prefix. Each
-- slice names its queue, which the broker counts as dead-lettered. On a partition that a group
-- which took the queue whole has not read yet, the group gets the cursor its first pop would
-- (created only where messages waited too long): without it, those messages waited for ever, and
-- went out however old.

create or replace function queen.log_expire_waiting_v2(
    p_max_messages integer, p_now timestamptz default null)
returns table (partition_id uuid, consumer_group text, base_offset bigint, start_idx integer,
               take integer, max_wait integer, queue_name text)
language plpgsql
as $$
#variable_conflict use_column
declare
    v_now    timestamptz := coalesce(p_now, now());
    v_budget integer := p_max_messages;
    v_seeds  integer := 100;
    v_cutoff timestamptz;
    v_wanted bigint;
    v_start  bigint;
    v_end    bigint;
    v_end_at timestamptz;
    v_n      integer;
    v_cursor bigint;
    v_batch  bigint;
    v_acked  bigint[];
    c        record;
    s        record;
begin
    -- Only (partition, group) pairs whose next message waited too long, probed before any lock
    -- and in this one statement: the segment of the next message is the oldest waiting (created_at
    -- is monotone). Locked to the sweep's commit, every backlogged cursor was skipped by the pops
    -- at every interval; probed one by one, 30,000 pairs took 225 ms a sweep (20 ms so).
    for c in
        select lc.partition_id, lc.consumer_group, q.max_wait_time_seconds as w, q.name,
               p.retained_from, lc.committed, q.id as queue_id, p.last_offset, p.created_at
          from queen.queues q
          join queen.log_partitions p on p.queue_id = q.id
          join queen.log_consumers lc on lc.partition_id = p.id
         cross join lateral (
                select ls.created_at from queen.log_segments ls
                 where ls.partition_id = p.id
                   and ls.base_offset <= greatest(lc.committed + 1, p.retained_from)
                 order by ls.base_offset desc
                 limit 1) head
         where q.max_wait_time_seconds > 0
           and lc.committed < p.last_offset
           -- a partition emptied (retention, a clear) has nothing to move: its cursors behind the
           -- last offset were locked at every sweep for nothing, and added up for good
           and p.retained_from <= p.last_offset
           and (lc.worker_id is null or lc.lease_expires_at is null or lc.lease_expires_at < v_now)
           and head.created_at < v_now - make_interval(secs => q.max_wait_time_seconds)
        union all
        select p.id, m.consumer_group, q.max_wait_time_seconds, q.name, p.retained_from, null,
               q.id, p.last_offset, p.created_at
          from queen.queues q
          join queen.log_partitions p on p.queue_id = q.id
         cross join lateral (
                select ls.created_at from queen.log_segments ls
                 where ls.partition_id = p.id and ls.base_offset <= p.retained_from
                 order by ls.base_offset desc
                 limit 1) head
          join queen.consumer_groups_metadata m on m.queue_id = q.id
         where q.max_wait_time_seconds > 0
           -- a group that took the queue whole (its first pop of the queue seeded every
           -- partition): not one that reads chosen partitions, nor one reset and not back yet
           and m.seeded_at is not null
           and p.retained_from <= p.last_offset
           and head.created_at < v_now - make_interval(secs => q.max_wait_time_seconds)
           and not exists (select 1 from queen.log_consumers lc
                            where lc.partition_id = p.id and lc.consumer_group = m.consumer_group)
    loop
        exit when v_budget <= 0;
        v_cutoff := v_now - make_interval(secs => c.w);
        -- at most 100 cursors created a call: each holds its locks to the commit
        continue when c.committed is null and v_seeds <= 0;
        -- the lock its dead letters' key takes, first and never waited for: a partition a queue
        -- delete or removal holds is skipped this sweep, its cursor left alone (the broker's own
        -- try of it, without waiting, then always passes: one such partition failed every sweep of
        -- every queue)
        perform 1 from queen.log_partitions p where p.id = c.partition_id for key share skip locked;
        continue when not found;
        if c.committed is null then
            -- created as log_pop_v1 creates it: trying the locks, never waiting, and seeded only
            -- from the partition of the read above (one removed and pushed again since starts
            -- from 0 again)
            continue when not pg_try_advisory_xact_lock_shared(
                               hashtextextended(c.queue_id::text || '/' || c.consumer_group, 46));
            continue when not pg_try_advisory_xact_lock(
                               hashtextextended(c.partition_id::text || '/' || c.consumer_group, 42));
            perform 1 from queen.log_partitions p
             where p.id = c.partition_id and p.created_at = c.created_at;
            continue when not found;
            -- read again under the group's lock: a group deleted since the statement above read
            -- it is not brought back (the seed would record it anew, as subscribed to everything)
            perform 1 from queen.consumer_groups_metadata m
             where m.queue_id = c.queue_id and m.consumer_group = c.consumer_group
               and m.seeded_at is not null;
            continue when not found;
            v_seeds := v_seeds - 1;
            v_cursor := queen.log_seed_cursor_v1(c.partition_id, c.queue_id, c.consumer_group,
                                                 c.last_offset, null, null, v_now);
            continue when v_cursor is null;
            insert into queen.log_consumers (partition_id, consumer_group, committed)
            values (c.partition_id, c.consumer_group, v_cursor)
            on conflict (partition_id, consumer_group) do nothing;
        end if;
        -- claimed one cursor at a time (one partition per statement: Citus locks no more)
        select lc.committed, lc.batch_end, lc.acked_offsets into v_cursor, v_batch, v_acked
          from queen.log_consumers lc
         where lc.partition_id = c.partition_id and lc.consumer_group = c.consumer_group
           and (lc.worker_id is null or lc.lease_expires_at is null or lc.lease_expires_at < v_now)
           for update skip locked;
        continue when not found;
        -- from the oldest message retained: a cursor behind a clear or retention gap wider than the
        -- budget found no segment in its window, and the messages after the gap were never swept
        v_wanted := greatest(v_cursor + 1, c.retained_from);
        v_end := null;
        -- the segment holding the cursor's next message (a backward LIMIT 1), then forward
        select ls.base_offset into v_start
          from queen.log_segments ls
         where ls.partition_id = c.partition_id and ls.base_offset <= v_wanted
         order by ls.base_offset desc
         limit 1;
        for s in
            select ls.base_offset, ls.msg_count, ls.created_at
              from queen.log_segments ls
             where ls.partition_id = c.partition_id
               and ls.base_offset >= coalesce(v_start, v_wanted)
               and ls.base_offset < v_wanted + v_budget
             order by ls.base_offset
        loop
            continue when s.base_offset + s.msg_count <= v_wanted;
            exit when s.created_at >= v_cutoff or v_budget <= 0;
            v_n := least(s.base_offset + s.msg_count - greatest(v_wanted, s.base_offset), v_budget)::integer;
            return query select c.partition_id, c.consumer_group, s.base_offset,
                                (greatest(v_wanted, s.base_offset) - s.base_offset)::integer,
                                v_n, c.w, c.name;
            v_end := greatest(v_wanted, s.base_offset) + v_n - 1;
            v_end_at := s.created_at;
            v_wanted := v_end + 1;
            v_budget := v_budget - v_n;
        end loop;
        if v_end is not null and v_batch > v_end then
            -- an expired lease's batch swept in part: the rest goes out again (its batch is
            -- cleared below), so what that lease dead-lettered there is no dead letter (it was
            -- both, and processed twice)
            delete from queen.dead_letters d
             where d.partition_id = c.partition_id and d.consumer_group = c.consumer_group
               and d.msg_offset > v_end and d.msg_offset <= v_batch
               and d.msg_offset = any (coalesce(v_acked, '{}')) and d.leased;
        end if;
        if v_end is not null then
            update queen.log_consumers lc
               set committed = v_end, committed_at = v_end_at, worker_id = null,
                   lease_expires_at = null, lease_acquired_at = null, batch_end = null,
                   acked_offsets = null, retry_count = 0, retry_end = null,
                   -- an expired lease's batch was dead-lettered, not acked by it
                   redelivered_to = greatest(lc.redelivered_to, lc.batch_end)
             where lc.partition_id = c.partition_id and lc.consumer_group = c.consumer_group;
        end if;
    end loop;
end;
$$;

-- Brokers of the builds before v2, during a rolling upgrade: v2 without the queue's name.
create or replace function queen.log_expire_waiting_v1(
    p_max_messages integer, p_now timestamptz default null)
returns table (partition_id uuid, consumer_group text, base_offset bigint, start_idx integer,
               take integer, max_wait integer)
language sql
as $$
    select e.partition_id, e.consumer_group, e.base_offset, e.start_idx, e.take, e.max_wait
      from queen.log_expire_waiting_v2(p_max_messages, p_now) e;
$$;
