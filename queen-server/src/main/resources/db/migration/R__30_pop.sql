-- Pop: which offsets may this consumer group take from this partition right now.

-- the shapes before the byte budget (QUEEN_POP_MAX_BYTES), and before p_kept_bytes
drop function if exists queen.log_pop_v1(uuid, text, uuid, integer, boolean, integer, text,
                                         timestamptz, boolean, timestamptz);
drop function if exists queen.log_pop_specific_v1(text, text, text, uuid, integer, boolean, text,
                                                  timestamptz, timestamptz);
drop function if exists queen.log_pop_v1(uuid, text, uuid, integer, boolean, integer, text,
                                         timestamptz, boolean, timestamptz, bigint);
drop function if exists queen.log_pop_specific_v1(text, text, text, uuid, integer, boolean, text,
                                                  timestamptz, timestamptz, bigint);

-- The claim for one partition. Returns one row per delivered segment slice (verdict 'delivered'),
-- or a single row with the verdict why nothing was delivered:
--   empty     nothing pending for this group
--   locked    leased by another worker or locked by a concurrent pop; retry_at = lease expiry if known
--   deferred  held by windowBuffer or delayedProcessing until retry_at
--   missing   the partition does not exist
-- A delivered row also says the bytes it charged against p_max_bytes, what is left of the pop's
-- byte budget (null: none); the callers pass on what remains to the next partition. Its retry_at
-- is the lease's end (null with autoAck).
-- Never waits on another transaction: a wildcard pop keeps its transaction open across its whole
-- candidate loop, and any wait there chains into stalls the deadlock detector cannot see.
create or replace function queen.log_pop_v1(
    p_partition_id uuid,
    p_group text,
    p_worker uuid,
    p_budget integer,
    p_auto_ack boolean,
    p_lease_seconds integer default null,
    p_sub_mode text default 'all',
    p_sub_from timestamptz default null,
    p_skip_window_debounce boolean default false,
    p_now timestamptz default null,
    p_max_bytes bigint default null,
    p_kept_bytes bigint default null)
returns table (verdict text, retry_at timestamptz, base_offset bigint, start_idx integer,
               take integer, msg_count integer, created_at timestamptz, blob bytea, attempt integer,
               bytes bigint)
language plpgsql
as $$
#variable_conflict use_column
declare
    v_now        timestamptz := coalesce(p_now, now());
    v_queue_id   uuid;
    v_last       bigint;
    v_retained   bigint;
    v_delay      integer;
    v_window     integer;
    v_lease_time integer;
    v_newest     timestamptz;
    v_visible    timestamptz;
    v_committed  bigint;
    v_retry_end  bigint;
    -- an expired lease's batch and what it acked out of order, dead letters among them
    v_lapsed_end bigint;
    v_lapsed     bigint[];
    v_sent       boolean := false;
    -- a delivered lease's end: the broker revisits the partition then, if no ack released it
    v_lease_until timestamptz;
    v_until      timestamptz;
    v_wanted     bigint;
    v_next       bigint;
    v_budget     integer := greatest(p_budget, 1);
    v_bases      bigint[] := '{}';
    v_starts     integer[] := '{}';
    v_takes      integer[] := '{}';
    v_taken      integer := 0;
    -- the byte budget left (null: none), and each slice's charge against it
    v_left       bigint := p_max_bytes;
    v_charges    bigint[] := '{}';
    v_first      bigint;
    v_end        bigint;
    -- the created_at of the last segment taken, the one holding v_end
    v_end_at     timestamptz;
    v_deferred   timestamptz;
    v_attempt    integer := 1;
    v_n          integer;
    v_i          integer;
    -- the partition read's incarnation: one removed as inactive comes back under its id
    v_created    timestamptz;
    h            record;
    s            record;
begin
    select p.queue_id, p.last_offset, p.retained_from, p.created_at, q.delayed_processing,
           q.window_buffer, q.lease_time
      into v_queue_id, v_last, v_retained, v_created, v_delay, v_window, v_lease_time
      from queen.log_partitions p
      join queen.queues q on q.id = p.queue_id
     where p.id = p_partition_id;
    if not found then
        return query select * from queen.pop_verdict('missing');
        return;
    end if;

    -- windowBuffer: a quiet-period debounce checked by one backward primary-key step to the newest
    -- segment (created_at is monotone in base_offset). The broker's revisit wheel may bypass it.
    if v_window > 0 and not p_skip_window_debounce then
        select s.created_at into v_newest
          from queen.log_segments s
         where s.partition_id = p_partition_id
         order by s.base_offset desc
         limit 1;
        if v_newest > v_now - make_interval(secs => v_window) then
            return query select * from queen.pop_verdict('deferred',
                                                          v_newest + make_interval(secs => v_window));
            return;
        end if;
    end if;
    -- delayedProcessing is never bypassed: only segments at least D seconds old are visible
    v_visible := case when v_delay > 0 then v_now - make_interval(secs => v_delay)
                      else 'infinity'::timestamptz end;

    -- The claim. SKIP LOCKED: another worker's live lease, or another pop mid-flight on this row,
    -- means this partition is simply skipped this cycle.
    select c.committed, c.retry_end, c.batch_end, c.acked_offsets
      into v_committed, v_retry_end, v_lapsed_end, v_lapsed
      from queen.log_consumers c
     where c.partition_id = p_partition_id and c.consumer_group = p_group
       and (c.worker_id is null or c.lease_expires_at is null or c.lease_expires_at < v_now)
       for update skip locked;

    if not found then
        -- Re-probe without the lease filter to tell "missing" from "leased or locked". No
        -- unconditional INSERT ... ON CONFLICT here: per-pop inserts serialize concurrent pops on
        -- the inserter's transaction id and, across randomly ordered partitions, deadlock.
        select c.lease_expires_at into v_until
          from queen.log_consumers c
         where c.partition_id = p_partition_id and c.consumer_group = p_group;
        if found then
            return query select * from queen.pop_verdict('locked',
                                                          case when v_until > v_now then v_until end);
            return;
        end if;
        -- Missing: try, not take. ON CONFLICT against a key another open transaction is inserting
        -- would wait for that transaction, and those waits chain into a livelock with no cycle.
        -- A hash collision false-skips an unrelated partition for one cycle, which is harmless.
        -- The shared lock on (queue, group) keeps the group's bulk seeder (which takes it
        -- exclusively, also without waiting) out while this transaction creates rows.
        if not pg_try_advisory_xact_lock_shared(hashtextextended(v_queue_id::text || '/' || p_group, 46))
           or not pg_try_advisory_xact_lock(hashtextextended(p_partition_id::text || '/' || p_group, 42)) then
            return query select * from queen.pop_verdict('locked');
            return;
        end if;
        -- Seeded from the partition read above only while it is the partition of that read: one
        -- removed as inactive and pushed again since has the same id and offsets from 0, and a
        -- seed at the old last offset would skip them. Held to commit, so that no removal takes
        -- it meanwhile (a removal skips a locked partition); one a removal holds now: locked.
        perform 1 from queen.log_partitions p
         where p.id = p_partition_id and p.created_at = v_created
           for key share skip locked;
        if not found then
            return query select * from queen.pop_verdict('locked');
            return;
        end if;
        perform queen.pop_commit_seeded_v1();
        v_committed := queen.log_seed_cursor_v1(p_partition_id, v_queue_id, p_group, v_last,
                                                p_sub_mode, p_sub_from, v_now);
        if v_committed is null then
            return query select * from queen.pop_verdict('locked');
            return;
        end if;
        -- holding the advisory lock, a conflict can only be with a committed row: no wait
        insert into queen.log_consumers (partition_id, consumer_group, committed)
        values (p_partition_id, p_group, v_committed)
        on conflict (partition_id, consumer_group) do nothing;
        select c.committed into v_committed
          from queen.log_consumers c
         where c.partition_id = p_partition_id and c.consumer_group = p_group
           and (c.worker_id is null or c.lease_expires_at is null or c.lease_expires_at < v_now)
           for update skip locked;
        if not found then
            return query select * from queen.pop_verdict('locked');
            return;
        end if;
    end if;

    -- A cursor inside the range retention deleted continues at the first retained message; the
    -- skipped offsets are a retention gap that the ack counts as consumed.
    v_wanted := greatest(v_committed + 1, v_retained);
    -- a failed batch is redelivered as it was: its retry budget is not spent on later messages
    if v_retry_end >= v_wanted then
        v_budget := least(v_budget, v_retry_end - v_wanted + 1)::integer;
    end if;

    if v_wanted <= v_last then
        -- Head probe: a bare backward LIMIT 1 with the covering test applied afterwards, so that a
        -- miss (fully consumed head, or a retention gap) can never walk the partition's head.
        select s.base_offset, s.base_offset + s.msg_count - 1 as end_offset, s.created_at,
               s.msg_count, octet_length(s.blob) as stored,
               coalesce(s.raw_bytes, queen.segment_raw_length(substring(s.blob from 1 for 12),
                                                              octet_length(s.blob))) as bytes
          into h
          from queen.log_segments s
         where s.partition_id = p_partition_id and s.base_offset <= v_wanted
         order by s.base_offset desc
         limit 1;
        if found and h.end_offset >= v_wanted then
            if h.created_at > v_visible then
                v_deferred := h.created_at + make_interval(secs => v_delay);
            else
                -- the head always gives one: callers stop before their budget runs out
                v_n := greatest(queen.pop_fit(least(h.end_offset - v_wanted + 1, v_budget)::integer,
                                              h.msg_count, h.bytes, v_left), 1);
                v_bases := v_bases || h.base_offset;
                v_starts := v_starts || (v_wanted - h.base_offset)::integer;
                v_takes := v_takes || v_n;
                v_charges := v_charges || queen.pop_charge(v_n, h.msg_count, h.bytes, h.stored);
                v_left := v_left - v_charges[1];
                v_taken := v_n;
                v_end_at := h.created_at;
            end if;
            v_next := h.end_offset + 1;
        else
            -- the cursor sits in a retention gap: resume at the first retained segment after it
            select s.base_offset into v_next
              from queen.log_segments s
             where s.partition_id = p_partition_id and s.base_offset > v_wanted
             order by s.base_offset
             limit 1;
        end if;
        -- Forward scan, from the first segment not yet taken. Segments hold consecutive offsets,
        -- so the rest of the batch can only come from segments starting below v_next + budget
        -- left: the range bounds the rows read whatever plan the statistics of a hot table give,
        -- and a deep backlog costs only the rows delivered. The FOR loop is a cursor and leaves at
        -- the budget; monotone created_at means the delay filter cuts a contiguous suffix, so the
        -- first invisible segment ends the scan.
        if v_deferred is null and v_next is not null and v_taken < v_budget
           and (v_left is null or v_left > 0) then
            for s in
                select s.base_offset, s.msg_count, s.created_at,
                       octet_length(s.blob) as stored,
                       coalesce(s.raw_bytes, queen.segment_raw_length(substring(s.blob from 1 for 12),
                                                                      octet_length(s.blob))) as bytes
                  from queen.log_segments s
                 where s.partition_id = p_partition_id
                   and s.base_offset >= v_next
                   and s.base_offset < v_next + (v_budget - v_taken)
                 order by s.base_offset
            loop
                if s.created_at > v_visible then
                    v_deferred := s.created_at + make_interval(secs => v_delay);
                    exit;
                end if;
                -- a slice cut short by the byte budget was charged past it (the crossing message
                -- counts whole), so no later segment fits: slices stay contiguous
                v_n := queen.pop_fit(least(s.msg_count, v_budget - v_taken), s.msg_count, s.bytes,
                                     v_left);
                exit when v_n = 0;
                v_bases := v_bases || s.base_offset;
                v_starts := v_starts || 0;
                v_takes := v_takes || v_n;
                v_charges := v_charges || queen.pop_charge(v_n, s.msg_count, s.bytes, s.stored);
                v_left := v_left - v_charges[cardinality(v_charges)];
                v_taken := v_taken + v_n;
                v_end_at := s.created_at;
                exit when v_taken >= v_budget;
            end loop;
        end if;
    end if;

    if v_taken = 0 then
        if v_deferred is not null then
            return query select * from queen.pop_verdict('deferred', v_deferred);
            return;
        end if;
        -- Cursor seal: a partition whose segments were all removed by retention would otherwise
        -- stay phantom pending forever. Only when it holds no segments at all and nothing is
        -- deferred (sealing past delayed segments would skip live messages); a concurrent push is
        -- safe because it lands above the snapshotted last_offset. A seal, not a claim: no lease
        -- or attempt field is touched.
        if v_last > v_committed
           and not exists (select 1 from queen.log_segments s where s.partition_id = p_partition_id) then
            -- undated: no segment holds the offset any more; not on a partition removed and
            -- created again since it was read (its offsets start again from 0, which the old last
            -- offset would skip; the claimed cursor keeps a removal out from here on)
            update queen.log_consumers c set committed = v_last, committed_at = null
             where c.partition_id = p_partition_id and c.consumer_group = p_group
               and exists (select 1 from queen.log_partitions p
                            where p.id = p_partition_id and p.created_at = v_created);
        end if;
        return query select * from queen.pop_verdict('empty');
        return;
    end if;

    v_n := array_length(v_bases, 1);
    v_first := v_bases[1] + v_starts[1];
    v_end := v_bases[v_n] + v_starts[v_n] + v_takes[v_n] - 1;
    if p_auto_ack then
        -- autoAck commits inside the pop: no lease, at-most-once
        update queen.log_consumers c
           set committed = v_end, committed_at = v_end_at, worker_id = null,
               lease_expires_at = null, lease_acquired_at = null, batch_end = null,
               acked_offsets = null, total_consumed = c.total_consumed + v_taken,
               last_consumed_at = v_now,
               -- a batch_end still set is an expired lease's: its batch goes out again
               redelivered_to = greatest(c.redelivered_to, c.batch_end)
         where c.partition_id = p_partition_id and c.consumer_group = p_group;
    else
        -- The lease covers (committed, batch_end]; only an ack moves the cursor. A batch starting
        -- where the previous delivery started is a redelivery (nack or lease expiry): attempt_count
        -- counts it, and it is telemetry only, never the retry budget.
        update queen.log_consumers c
           set worker_id = p_worker,
               lease_expires_at = v_now + make_interval(secs =>
                   coalesce(nullif(p_lease_seconds, 0), nullif(v_lease_time, 0), 60)),
               lease_acquired_at = v_now,
               batch_end = v_end,
               batch_end_at = v_end_at,
               acked_offsets = null,
               attempt_count = case when c.attempt_offset is not distinct from v_first
                                    then c.attempt_count + 1 else 1 end,
               attempt_offset = v_first,
               -- a batch_end still set is an expired lease's: its batch goes out again
               redelivered_to = greatest(c.redelivered_to, c.batch_end)
         where c.partition_id = p_partition_id and c.consumer_group = p_group
        returning c.attempt_count, c.lease_expires_at into v_attempt, v_lease_until;
        perform queen.pop_commit_lease_v1();
    end if;

    -- one primary-key lookup per delivered segment: the blobs read are exactly those delivered,
    -- whatever plan a join would get on a table whose statistics lag behind its pushes
    for v_i in 1 .. v_n loop
        return query
        select 'delivered'::text, v_lease_until, s.base_offset, v_starts[v_i], v_takes[v_i],
               s.msg_count, s.created_at,
               queen.pop_blob(s.blob, v_starts[v_i], s.raw_bytes, s.msg_count, p_kept_bytes),
               v_attempt, v_charges[v_i]
          from queen.log_segments s
         where s.partition_id = p_partition_id and s.base_offset = v_bases[v_i];
        v_sent := v_sent or found;
    end loop;
    if not v_sent then
        -- retention or a clear deleted every slice since the plan read it (each statement reads
        -- anew): no lease over nothing, which kept the group off the partition until it expired
        -- (an expired lease's batch and acks as they were: its dead letters are taken back by
        -- the pop that sends that batch)
        update queen.log_consumers c
           set worker_id = null, lease_expires_at = null, lease_acquired_at = null,
               batch_end = v_lapsed_end, acked_offsets = v_lapsed
         where c.partition_id = p_partition_id and c.consumer_group = p_group;
    elsif v_lapsed is not null then
        -- an expired lease's batch goes out again whole, with what it dead-lettered above the
        -- cursor: so that is no dead letter too (processed twice, a third time after a requeue)
        delete from queen.dead_letters d
         where d.partition_id = p_partition_id and d.consumer_group = p_group
           and d.msg_offset >= v_wanted and d.msg_offset <= v_lapsed_end
           and d.msg_offset = any (v_lapsed) and d.leased;
    end if;
end;
$$;

-- The single-partition route. The response is assembled here, after the claim, from the partition
-- the claim actually ran on: the partitionId reported for a delivered batch is never empty (a pop
-- racing the partition-creating push either finds the committed partition or answers nothing).
-- An unknown queue or partition returns no rows: "nothing to deliver", never an error.
create or replace function queen.log_pop_specific_v1(
    p_queue text,
    p_partition text,
    p_group text,
    p_worker uuid,
    p_batch integer,
    p_auto_ack boolean,
    p_sub_mode text default 'all',
    p_sub_from timestamptz default null,
    p_now timestamptz default null,
    p_max_bytes bigint default null,
    p_kept_bytes bigint default null)
returns table (partition_id uuid, partition_name text, queue_name text,
               verdict text, retry_at timestamptz, base_offset bigint, start_idx integer,
               take integer, msg_count integer, created_at timestamptz, blob bytea, attempt integer)
language plpgsql
as $$
#variable_conflict use_column
declare
    v_qid uuid;
    v_pid uuid;
begin
    select q.id into v_qid from queen.queues q where q.name = p_queue;
    if not found then
        return;
    end if;
    -- by the derived id, a value of its own: on Citus a lookup by name would ask every worker
    v_pid := queen.partition_uuid(v_qid, p_partition);
    perform 1 from queen.log_partitions p where p.id = v_pid;
    if not found then
        return;
    end if;
    return query
    select v_pid, p_partition, p_queue, r.verdict, r.retry_at, r.base_offset, r.start_idx,
           r.take, r.msg_count, r.created_at, r.blob, r.attempt
      from queen.log_pop_v1(v_pid, p_group, p_worker, p_batch, p_auto_ack, null,
                            p_sub_mode, p_sub_from, false, p_now, p_max_bytes, p_kept_bytes) r;
end;
$$;
