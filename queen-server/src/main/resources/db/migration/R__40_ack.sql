-- Ack: the only thing that moves a cursor.

drop function if exists queen.log_ack_v1(text, uuid[], text[], uuid[], text[], boolean, timestamptz);
drop function if exists queen.log_ack_v1(text, uuid[], text[], uuid[], text[], boolean, timestamptz, bigint[]);

-- When the broker issued a lease (its UUIDv7 time, the broker's clock); null for an id that is no
-- UUIDv7, which the broker never issued.
create or replace function queen.lease_issued_at(p_lease uuid)
returns timestamptz
language sql
immutable
as $$
    select case when substr(p_lease::text, 15, 1) = '7'
                then to_timestamp(('x' || substr(replace(p_lease::text, '-', ''), 1, 12))::bit(48)::bigint
                                  / 1000.0) end
$$;

-- Applies acknowledgements, grouped by (partition, lease) in partition order, then message order
-- (a stable lock order: concurrent acks cannot deadlock). An ack naming a lease is checked
-- against that lease, which also decides the consumer group; an ack without one is applied to
-- p_group's cursor, and joins that cursor's live lease when the message is inside it. A null
-- p_group is an ack that named no group: queue mode's cursor, and a lease no longer live is told
-- success only for what its own ack released (see redelivered_to, V18). Business failures are per
-- item, never an exception.
--
--   completed, success  the message joins the lease's acked set; the cursor advances over the
--                       contiguous acked prefix; when it reaches batch_end the lease is released.
--                       At or below the cursor: a no-op that never moves the cursor back.
--                       Outside any live lease (an ack without leaseId after the lease ended)
--                       only the next message moves the cursor; a later one is refused.
--   failed              under the queue's retryLimit: charges the retry budget once per failed
--                       batch and releases the lease (the batch is redelivered from the cursor,
--                       capped to the failed range); later failed acks of that batch find the
--                       lease released. Budget spent: the message is dead-lettered and counts as
--                       acked. With p_transactional, dead-lettered at once.
--   retry               releases the lease without charging the budget (refused in a
--                       transaction). Outside a lease, retry and failed change nothing.
--   dlq                 dead-lettered at once, whatever the budget.
--   anything else       no change, success false, no error text.
--
-- Dead-lettered items come back with dlq = true and their offset: the caller writes the dead
-- letter rows (payloads live in blobs PostgreSQL never opens) in the same transaction.
-- lease_ended marks every item of a lease this call released (by completion, failure, retry or
-- dead-lettering), and has_more whether the partition then still holds messages for the group:
-- the broker puts such a partition back among its pop candidates (ack-promote).
--
-- Each item's offset is p_offsets[i] when the caller gives it (-1: no such message), else the one
-- live message of the transactionId index with the transactionId's hash. Raises QN003 and changes
-- nothing when a hash has several live messages (a collision): the caller reads the frames and
-- passes p_offsets.
create or replace function queen.log_ack_v1(
    p_group text,
    p_partition_ids uuid[],
    p_txn_ids text[],
    p_lease_ids uuid[],
    p_statuses text[],
    p_transactional boolean default false,
    p_now timestamptz default null,
    p_offsets bigint[] default null)
returns table (idx integer, success boolean, error text, queue_name text, partition_name text,
               lease_released boolean, dlq boolean, partition_id uuid, consumer_group text,
               msg_offset bigint, retry_count integer, lease_ended boolean, has_more boolean)
language plpgsql
-- no JIT: default row estimates over arrays trip it for statements that run in a millisecond
set jit = off
as $$
#variable_conflict use_column
declare
    v_now         timestamptz := coalesce(p_now, now());
    v_n           integer := coalesce(array_length(p_partition_ids, 1), 0);
    r_success     boolean[] := array_fill(false, array[v_n]);
    r_error       text[] := array_fill(null::text, array[v_n]);
    r_released    boolean[] := array_fill(false, array[v_n]);
    r_dlq         boolean[] := array_fill(false, array[v_n]);
    r_again       boolean[] := array_fill(false, array[v_n]);
    v_flipped     bigint[];
    r_offset      bigint[] := array_fill(null::bigint, array[v_n]);
    r_group       text[] := array_fill(null::text, array[v_n]);
    r_retries     integer[] := array_fill(null::integer, array[v_n]);
    r_freed       boolean[] := array_fill(false, array[v_n]);
    g             record;
    it            record;
    cur           queen.log_consumers;
    v_limit       integer;
    v_live        boolean;
    v_done        bigint;
    v_once_from   bigint;
    v_once_to     bigint;
    v_in_lease    boolean;
    v_release     boolean;
    v_charged     boolean;
    v_changed     boolean;
    v_freed_end   bigint;
    v_acked       bigint[];
    v_members     integer[];
    v_dead        integer[];
    v_decided     bigint[];
    v_decided_as  text[];
    v_commit_to   bigint;
    v_new         bigint;
    v_new_at      timestamptz;
    v_next        bigint;
    v_off         bigint;
    v_count       integer;
    v_retry_end   bigint;
    v_i           integer;
    v_offsets     bigint[];
    v_retained    bigint;
    v_last        bigint;
    r_queue       text[] := array_fill(null::text, array[v_n]);
    r_part        text[] := array_fill(null::text, array[v_n]);
    r_more        boolean[] := array_fill(false, array[v_n]);
    v_qname       text;
    v_pname       text;
    v_group       text := coalesce(p_group, '__QUEUE_MODE__');
begin
    v_offsets := array_fill(null::bigint, array[v_n]);
    for it in
        select u.i, u.pid, u.txn from unnest(p_partition_ids, p_txn_ids) with ordinality as u(pid, txn, i)
    loop
        if p_offsets[it.i] is not null then
            v_offsets[it.i] := nullif(p_offsets[it.i], -1);
            continue;
        end if;
        -- by the transactionId index, one partition per statement (on Citus: one worker)
        select p.retained_from into v_retained from queen.log_partitions p where p.id = it.pid;
        continue when not found;
        select min(o.off), count(*) into v_off, v_count
          from queen.log_txn_offsets_v1(it.pid, queen.txn_hash(it.txn), v_retained) as o(off);
        if v_count > 1 then
            raise exception using errcode = 'QN003', message = 'ambiguous transaction id';
        end if;
        v_offsets[it.i] := v_off;
    end loop;

    for g in
        select distinct u.pid, u.lease
          from unnest(p_partition_ids, p_lease_ids) as u(pid, lease)
         order by u.pid, u.lease nulls first
    loop
        cur := null;
        if g.lease is not null then
            select * into cur from queen.log_consumers c
             where c.partition_id = g.pid and c.worker_id = g.lease
               for update;
            v_live := found and cur.lease_expires_at > v_now;
            -- What a lease no longer live committed itself counts as done for a retry of its ack
            -- (its first answer lost with a killed broker); not what others committed since, nor
            -- what it held when it expired: what it had committed when its own ack released it
            -- (released_by: the last release only), and any committed offset above
            -- redelivered_to, which no other lease was ever handed
            v_done := null;
            if found then
                v_once_from := coalesce(cur.redelivered_to, -1) + 1;
                v_once_to := cur.committed;
            else
                -- a lease issued before the cursor row was created belonged to a cursor since
                -- deleted, which handed the same offsets out: none of them is its doing. A pop
                -- takes its lease id at each claim, so a minute of slack covers the claim's own
                -- waits (a permit, a connection) and the broker's clock against the database's;
                -- within that minute, a delete or seek of the group noted after the lease was
                -- issued says the same (a stale lease was told it had acked what the re-created
                -- cursor's lease processed)
                select case when c.released_by = g.lease then least(c.committed, c.released_to) end,
                       case when c.created_at > queen.lease_issued_at(g.lease) + interval '1 minute'
                                 or exists (
                                    select 1
                                      from queen.group_resets r
                                      join queen.log_partitions lp on lp.id = g.pid
                                      join queen.queues q on q.id = lp.queue_id
                                     where r.consumer_group = v_group
                                       and (r.queue_name is null or r.queue_name = q.name)
                                       and r.reset_at > queen.lease_issued_at(g.lease))
                            then c.committed + 1
                            else coalesce(c.redelivered_to, -1) + 1 end,
                       c.committed
                  into v_done, v_once_from, v_once_to
                  from queen.log_consumers c
                 where c.partition_id = g.pid and c.consumer_group = v_group;
            end if;
        else
            select * into cur from queen.log_consumers c
             where c.partition_id = g.pid and c.consumer_group = v_group
               for update;
            v_live := found and cur.worker_id is not null and cur.lease_expires_at > v_now;
        end if;
        if cur.retry_end < cur.attempt_offset then
            -- the failed range is behind this batch (an autoAck pop, a cursor seal or retention
            -- passed it): its budget was spent on it, and charged this batch's first failure as a
            -- last one
            cur.retry_count := 0;
            cur.retry_end := null;
        end if;
        select q.retry_limit, q.name, p.name, p.last_offset, p.retained_from
          into v_limit, v_qname, v_pname, v_last, v_retained
          from queen.log_partitions p join queen.queues q on q.id = p.queue_id
         where p.id = g.pid;

        v_acked := coalesce(cur.acked_offsets, '{}');
        v_members := '{}';
        v_decided := '{}';
        v_decided_as := '{}';
        v_dead := '{}';
        v_commit_to := null;
        v_release := false;
        v_charged := false;
        v_changed := false;
        v_freed_end := null;
        for it in
            select u.i, u.status, v_offsets[u.i] as msg_offset
              from unnest(p_partition_ids, p_lease_ids, p_statuses)
                   with ordinality as u(pid, lease, status, i)
             where u.pid = g.pid and u.lease is not distinct from g.lease
             order by v_offsets[u.i] nulls first, u.i
        loop
            r_offset[it.i] := it.msg_offset;
            r_group[it.i] := cur.consumer_group;
            r_queue[it.i] := v_qname;
            r_part[it.i] := v_pname;
            v_in_lease := v_live and it.msg_offset <= cur.batch_end;
            if it.msg_offset is null then
                r_error[it.i] := 'Message not found';
            elsif g.lease is not null and not v_live
                  and (it.msg_offset <= v_done
                       -- a lease id the broker could have issued (a UUIDv7), not any string
                       or (it.msg_offset between v_once_from and v_once_to
                           and queen.lease_issued_at(g.lease) is not null
                           -- the cursor of the group the ack names: a lease of another group
                           -- may not have committed anything on it
                           and p_group is not null))
                  and it.status in ('completed', 'success') and not p_transactional then
                -- a retried ack whose first answer was lost (a broker killed after commit); not in
                -- a transaction, whose pushes would be applied a second time
                r_success[it.i] := true;
            elsif g.lease is not null and not v_live then
                r_error[it.i] := 'Invalid or expired lease';
            elsif cur.partition_id is null then
                r_error[it.i] := 'Consumer group has no position on this partition';
            elsif it.status not in ('completed', 'success', 'failed', 'retry', 'dlq')
                  or (p_transactional and it.status = 'retry') then
                null; -- an unknown status changes nothing and reports success false
            elsif it.msg_offset = any(v_decided) then
                -- a message named twice is decided by its first item: [dlq, completed] of one
                -- message answered both, committed it and counted a dead letter
                if v_decided_as[array_position(v_decided, it.msg_offset)]
                   = replace(it.status, 'success', 'completed') then
                    r_success[it.i] := true;
                    r_again[it.i] := true;
                else
                    r_error[it.i] := 'An earlier item of this request acknowledged the message otherwise';
                end if;
            elsif it.msg_offset <= cur.committed then
                r_success[it.i] := true; -- already consumed: never moves the cursor back
            elsif g.lease is not null and not v_in_lease then
                r_error[it.i] := 'Message is not part of this lease';
            elsif it.msg_offset <= v_freed_end then
                -- a lease-less ack of a batch that an earlier item of this request gave back
                r_error[it.i] := 'The batch was released by an earlier ack and will be redelivered';
            elsif not v_in_lease
                  and (it.status in ('completed', 'success', 'dlq')
                       or (it.status = 'failed' and p_transactional))
                  and it.msg_offset <> greatest(cur.committed, coalesce(v_commit_to, -1)) + 1 then
                -- outside any lease the cursor only moves message by message: skipping ahead
                -- would lose what lies between, which may still be in work or may fail
                r_error[it.i] := 'Message is not the next one to acknowledge on this partition';
            elsif it.status in ('completed', 'success') then
                if v_in_lease then
                    v_acked := v_acked || it.msg_offset;
                    v_members := v_members || it.i::integer;
                else
                    v_commit_to := it.msg_offset;
                end if;
                v_decided := v_decided || it.msg_offset;
                v_decided_as := v_decided_as || 'completed'::text;
                r_success[it.i] := true;
            elsif it.status = 'retry' or (it.status = 'failed' and not v_in_lease and not p_transactional) then
                -- outside a lease there is nothing to release and nothing to charge
                if v_in_lease then
                    v_release := true;
                    v_live := false;
                    v_freed_end := cur.batch_end;
                end if;
                r_success[it.i] := true;
                r_released[it.i] := v_in_lease;
            elsif it.status = 'failed' and not p_transactional
                  and cur.retry_count + (case when v_charged then 1 else 0 end) < v_limit then
                -- charged once per failed batch: the release makes later failed acks of the
                -- same batch find the lease gone
                v_charged := true;
                if v_in_lease then
                    v_release := true;
                    v_live := false;
                    v_freed_end := cur.batch_end;
                end if;
                r_success[it.i] := true;
                r_released[it.i] := v_in_lease;
            else
                -- dlq, a failed ack past the budget, or a failed ack inside a transaction
                v_dead := v_dead || it.i::integer;
                if v_in_lease then
                    v_acked := v_acked || it.msg_offset;
                else
                    v_commit_to := it.msg_offset;
                end if;
                v_decided := v_decided || it.msg_offset;
                v_decided_as := v_decided_as || it.status;
                r_success[it.i] := true;
                r_dlq[it.i] := true;
            end if;
        end loop;

        continue when cur.partition_id is null;
        v_changed := v_release or v_charged or v_commit_to is not null
                     or cardinality(v_acked) > cardinality(coalesce(cur.acked_offsets, '{}'))
                     -- retention or a clear deleted messages of this live lease past the cursor:
                     -- its acks of them find nothing, and a lease over only deleted messages
                     -- held the partition from its group until it expired
                     or (g.lease is not null and v_live
                         and v_retained > greatest(cur.committed + 1, cur.attempt_offset));
        continue when not v_changed;
        v_new := greatest(cur.committed, coalesce(v_commit_to, cur.committed));
        if cur.worker_id is not null and cur.lease_expires_at > v_now then
            -- advance over the contiguous acked prefix; offsets between the cursor and the batch's
            -- first delivered offset, or that retention deleted since the delivery, are a
            -- retention gap and count as acked (no ack can name them: the lease stayed to expire)
            v_next := greatest(v_new + 1, cur.attempt_offset, v_retained);
            foreach v_off in array (select coalesce(array_agg(distinct a order by a), '{}')
                                      from unnest(v_acked) a where a >= v_next)
            loop
                exit when v_off <> v_next;
                v_next := v_next + 1;
            end loop;
            if v_next > cur.attempt_offset then
                v_new := greatest(v_new, v_next - 1);
            end if;
            if v_new >= cur.batch_end then
                v_release := true;
                foreach v_i in array v_members loop
                    r_released[v_i] := true;
                end loop;
            end if;
        end if;

        v_new_at := queen.log_cursor_offset_at_v1(cur, v_new);
        v_count := cur.retry_count + (case when v_charged then 1 else 0 end);
        -- a dead letter records the budget spent on it
        foreach v_i in array v_dead loop
            r_retries[v_i] := v_count;
        end loop;
        v_retry_end := case when v_charged then coalesce(cur.retry_end, cur.batch_end)
                            else cur.retry_end end;
        -- the failed range is done once the cursor passes it; a completed batch resets the budget
        if (v_retry_end is not null and v_new >= v_retry_end)
           or (v_retry_end is null and v_release and not v_charged) then
            v_count := 0;
            v_retry_end := null;
        end if;

        if v_release and v_new < cur.batch_end then
            -- given back short of its batch: what this lease dead-lettered above the cursor goes
            -- out again with the rest, so it is no dead letter too (processed a second time, and
            -- a third after a requeue); its next delivery may dead-letter it again. Any item of
            -- this request, a lease-less one's too: its dead letter is written after this call
            v_flipped := '{}';
            -- in request order: an item comes before its repeats, which answer as it does
            for v_i in select u.i from unnest(p_partition_ids) with ordinality as u(pid, i)
                        where u.pid = g.pid order by u.i
            loop
                if r_dlq[v_i] and r_group[v_i] = cur.consumer_group
                   and r_offset[v_i] > v_new and r_offset[v_i] <= cur.batch_end then
                    r_dlq[v_i] := false;
                    r_success[v_i] := false;
                    r_error[v_i] := 'The batch was released and will be redelivered';
                    v_flipped := v_flipped || r_offset[v_i];
                elsif r_again[v_i] and r_group[v_i] = cur.consumer_group
                      and r_offset[v_i] = any (v_flipped) then
                    r_success[v_i] := false;
                    r_error[v_i] := 'The batch was released and will be redelivered';
                end if;
            end loop;
            delete from queen.dead_letters d
             where d.partition_id = cur.partition_id and d.consumer_group = cur.consumer_group
               and d.msg_offset > v_new and d.msg_offset <= cur.batch_end
               and d.msg_offset = any (coalesce(cur.acked_offsets, '{}')) and d.leased;
        end if;
        if v_release then
            -- every item of this lease learns that it ended, for the broker's ack-promote
            for v_i in select u.i from unnest(p_partition_ids, p_lease_ids) with ordinality as u(pid, lease, i)
                        where u.pid = g.pid and u.lease is not distinct from g.lease loop
                r_freed[v_i] := true;
                -- the partition still holds messages past the released cursor (ack-promote)
                r_more[v_i] := v_new < v_last;
            end loop;
            update queen.log_consumers c
               set committed = v_new, committed_at = v_new_at,
                   worker_id = null, lease_expires_at = null,
                   lease_acquired_at = null, batch_end = null, acked_offsets = null,
                   -- released by its own ack, or by a lease-less one, which is not its ack
                   released_by = case when g.lease is not null then cur.worker_id end,
                   released_to = v_new,
                   -- given back with part of its batch not committed: that part goes out again
                   redelivered_to = greatest(c.redelivered_to,
                                             case when v_new < cur.batch_end or g.lease is null
                                                  then cur.batch_end end),
                   retry_count = v_count, retry_end = v_retry_end,
                   total_consumed = c.total_consumed + (v_new - cur.committed),
                   last_consumed_at = case when v_new > cur.committed then v_now
                                           else c.last_consumed_at end
             where c.partition_id = cur.partition_id and c.consumer_group = cur.consumer_group;
        else
            update queen.log_consumers c
               set committed = v_new, committed_at = v_new_at,
                   acked_offsets = (select array_agg(distinct a order by a) from unnest(v_acked) a
                                     where a > v_new),
                   -- a lease-less ack committing under a lease: not that lease's own ack
                   redelivered_to = greatest(c.redelivered_to,
                                             case when g.lease is null and v_new > cur.committed
                                                  then cur.batch_end end),
                   retry_count = v_count, retry_end = v_retry_end,
                   total_consumed = c.total_consumed + (v_new - cur.committed),
                   last_consumed_at = case when v_new > cur.committed then v_now
                                           else c.last_consumed_at end
             where c.partition_id = cur.partition_id and c.consumer_group = cur.consumer_group;
        end if;
    end loop;

    return query
    select (u.i - 1)::integer, r_success[u.i], r_error[u.i], r_queue[u.i], r_part[u.i],
           r_released[u.i], r_dlq[u.i], p_partition_ids[u.i], r_group[u.i], r_offset[u.i],
           r_retries[u.i], r_freed[u.i], r_more[u.i]
      from generate_series(1, v_n) as u(i)
     order by u.i;
end;
$$;
