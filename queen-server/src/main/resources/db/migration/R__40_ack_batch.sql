-- Ack: the registry's fast path for whole leased batches (the general path is R__40_ack.sql).

-- The ack registry's fast path: a whole leased batch acknowledged as completed becomes one
-- positional cursor advance per partition, guarded by the lease (worker_id = leaseId, still live,
-- same batch_end), with no per-message lookups. A row that no longer matches is left alone and
-- reported acked = false: the caller falls back to queen.log_ack_v1 for precise per-item answers.
-- Passing the batch's end releases the lease and, like a completed batch in log_ack_v1, resets the
-- retry budget once the cursor passes the failed range.
create or replace function queen.log_ack_batch_v1(
    p_partition_ids uuid[], p_leases uuid[], p_batch_ends bigint[], p_now timestamptz default null)
returns table (idx integer, acked boolean, queue_name text, partition_name text,
               consumer_group text, has_more boolean)
language plpgsql
-- no JIT: default row estimates over arrays trip it for statements that run in a millisecond
set jit = off
as $$
#variable_conflict use_column
declare
    v_now   timestamptz := coalesce(p_now, now());
    v_n     integer := coalesce(array_length(p_partition_ids, 1), 0);
    r_acked boolean[] := array_fill(false, array[v_n]);
    r_queue text[] := array_fill(null::text, array[v_n]);
    r_part  text[] := array_fill(null::text, array[v_n]);
    r_group text[] := array_fill(null::text, array[v_n]);
    r_more  boolean[] := array_fill(false, array[v_n]);
    a       record;
    v_group text;
    v_queue text;
    v_part  text;
    v_last  bigint;
begin
    -- one cursor per statement, in partition order (a stable lock order): on Citus each statement
    -- goes to the worker of its partition alone
    for a in
        select u.pid, u.lease, u.batch_end, u.i
          from unnest(p_partition_ids, p_leases, p_batch_ends) with ordinality as u(pid, lease, batch_end, i)
         order by u.pid, u.i
    loop
        update queen.log_consumers c
           set committed = a.batch_end, committed_at = c.batch_end_at,
               worker_id = null, lease_expires_at = null,
               lease_acquired_at = null, batch_end = null, acked_offsets = null,
               released_by = c.worker_id, released_to = a.batch_end,
               retry_count = case when c.retry_end is null or a.batch_end >= c.retry_end
                                  then 0 else c.retry_count end,
               retry_end = case when c.retry_end is null or a.batch_end >= c.retry_end
                                then null else c.retry_end end,
               total_consumed = c.total_consumed + (a.batch_end - c.committed),
               last_consumed_at = v_now
         where c.partition_id = a.pid and c.worker_id = a.lease
           and c.lease_expires_at > v_now
           and c.batch_end = a.batch_end
        returning c.consumer_group into v_group;
        r_acked[a.i] := found;
        if found then
            r_group[a.i] := v_group;
        end if;
        select q.name, p.name, p.last_offset into v_queue, v_part, v_last
          from queen.log_partitions p join queen.queues q on q.id = p.queue_id
         where p.id = a.pid;
        r_queue[a.i] := v_queue;
        r_part[a.i] := v_part;
        r_more[a.i] := r_acked[a.i] and v_last > a.batch_end;
    end loop;
    -- a row for every batch, acked or not, the partition gone too: callers read them by position
    return query
    select (u.i - 1)::integer, r_acked[u.i], r_queue[u.i], r_part[u.i], r_group[u.i], r_more[u.i]
      from generate_series(1, v_n) as u(i)
     order by u.i;
end;
$$;
