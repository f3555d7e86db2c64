-- Ack: the only thing that moves a cursor.

-- Applies acknowledgements, grouped by (partition, lease) in partition order, then message order
-- (a stable lock order: concurrent acks cannot deadlock). An ack naming a lease is checked
-- against that lease, which also decides the consumer group; an ack without one is applied to
-- p_group's cursor. Business failures are per item, never an exception.
--
-- completed / success: the message joins the lease's acked set and the cursor advances over the
-- contiguous acked prefix; when it reaches batch_end the lease is released and the retry budget
-- resets. A message at or below the cursor is a harmless no-op that never moves the cursor back.
-- Without a lease, a message outside any live lease commits the cursor up to it.
create or replace function queen.log_ack_v1(
    p_group text,
    p_partition_ids uuid[],
    p_txn_ids text[],
    p_lease_ids uuid[],
    p_statuses text[],
    p_now timestamptz default null)
returns table (idx integer, success boolean, error text, queue_name text, partition_name text,
               lease_released boolean, dlq boolean)
language plpgsql
as $$
#variable_conflict use_column
declare
    v_now        timestamptz := coalesce(p_now, now());
    v_n          integer := coalesce(array_length(p_partition_ids, 1), 0);
    r_success    boolean[] := array_fill(false, array[v_n]);
    r_error      text[] := array_fill(null::text, array[v_n]);
    r_released   boolean[] := array_fill(false, array[v_n]);
    g            record;
    it           record;
    cur          queen.log_consumers;
    v_live       boolean;
    v_acked      bigint[];
    v_members    integer[];
    v_commit_to  bigint;
    v_new        bigint;
    v_next       bigint;
    v_off        bigint;
    v_i          integer;
begin
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
        else
            select * into cur from queen.log_consumers c
             where c.partition_id = g.pid and c.consumer_group = p_group
               for update;
            v_live := found and cur.worker_id is not null and cur.lease_expires_at > v_now;
        end if;

        v_acked := coalesce(cur.acked_offsets, '{}');
        v_members := '{}';
        v_commit_to := null;
        for it in
            select u.i, u.status, t.msg_offset
              from unnest(p_partition_ids, p_lease_ids, p_statuses, p_txn_ids)
                   with ordinality as u(pid, lease, status, txn, i)
              left join queen.log_txn_ids t on t.partition_id = u.pid and t.transaction_id = u.txn
             where u.pid = g.pid and u.lease is not distinct from g.lease
             order by t.msg_offset nulls first, u.i
        loop
            if it.msg_offset is null then
                r_error[it.i] := 'Message not found';
            elsif g.lease is not null and not v_live then
                r_error[it.i] := 'Invalid or expired lease';
            elsif cur.partition_id is null then
                r_error[it.i] := 'Consumer group has no position on this partition';
            elsif it.status not in ('completed', 'success') then
                null; -- an unknown status changes nothing and reports success false
            elsif it.msg_offset <= cur.committed then
                r_success[it.i] := true;
            elsif v_live and it.msg_offset <= cur.batch_end then
                v_acked := v_acked || it.msg_offset;
                v_members := v_members || it.i::integer;
                r_success[it.i] := true;
            elsif g.lease is not null then
                r_error[it.i] := 'Message is not part of this lease';
            else
                v_commit_to := greatest(v_commit_to, it.msg_offset);
                r_success[it.i] := true;
            end if;
        end loop;

        continue when cur.partition_id is null;
        v_new := greatest(cur.committed, coalesce(v_commit_to, cur.committed));
        if v_live then
            -- advance over the contiguous acked prefix; offsets between the cursor and the batch's
            -- first delivered offset are a retention gap and count as acked
            v_next := greatest(v_new + 1, cur.attempt_offset);
            foreach v_off in array (select coalesce(array_agg(distinct a order by a), '{}')
                                      from unnest(v_acked) a where a >= v_next)
            loop
                exit when v_off <> v_next;
                v_next := v_next + 1;
            end loop;
            if v_next > cur.attempt_offset then
                v_new := greatest(v_new, v_next - 1);
            end if;
        end if;

        if v_live and v_new >= cur.batch_end then
            update queen.log_consumers c
               set committed = v_new, worker_id = null, lease_expires_at = null,
                   lease_acquired_at = null, batch_end = null, acked_offsets = null,
                   retry_count = 0,
                   total_consumed = c.total_consumed + (v_new - cur.committed),
                   last_consumed_at = v_now
             where c.partition_id = cur.partition_id and c.consumer_group = cur.consumer_group;
            foreach v_i in array v_members loop
                r_released[v_i] := true;
            end loop;
        elsif v_live then
            update queen.log_consumers c
               set committed = v_new,
                   acked_offsets = (select array_agg(distinct a order by a) from unnest(v_acked) a
                                     where a > v_new),
                   total_consumed = c.total_consumed + (v_new - cur.committed),
                   last_consumed_at = v_now
             where c.partition_id = cur.partition_id and c.consumer_group = cur.consumer_group;
        elsif v_new > cur.committed then
            update queen.log_consumers c
               set committed = v_new,
                   total_consumed = c.total_consumed + (v_new - cur.committed),
                   last_consumed_at = v_now
             where c.partition_id = cur.partition_id and c.consumer_group = cur.consumer_group;
        end if;
    end loop;

    return query
    select (u.i - 1)::integer, r_success[u.i], r_error[u.i], q.name, p.name, r_released[u.i], false
      from generate_series(1, v_n) as u(i)
      left join queen.log_partitions p on p.id = p_partition_ids[u.i]
      left join queen.queues q on q.id = p.queue_id
     order by u.i;
end;
$$;
