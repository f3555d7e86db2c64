-- Inactive partitions (PARTITION_CLEANUP_DAYS): a partition that holds no message and that nobody
-- pushed to, popped or acked for that long is removed with its cursors, so a partition per order,
-- user or job does not keep its rows (and its share of every statistics refresh) for good. Its id
-- is derived from its queue and name (queen.partition_uuid): a later push of the same name creates
-- it again under the same id, with offsets from 0.

-- Removes one partition when, read under its lock, it holds no message, had no push since
-- p_cutoff, and none of its cursors was popped or acked since then or holds a lease that runs past
-- it. A cursor's creation is no activity: a new group's first pop of the queue, or a seek, puts
-- one on every partition, and one such group a month kept every emptied partition for good. A
-- partition with dead letters stays (their keys would meet the offsets of the partition pushed
-- again), and so does one a stream keeps state of (the stream's own aggregates, not messages). True when removed. Every row naming the partition goes with it: the foreign keys
-- cascade (on Citus too) to its cursors, transactionId index and traces, so nothing of it is read
-- again under its id. Never waits: a partition or cursor locked now is in use, and stays.
create or replace function queen.partition_remove_v1(p_partition_id uuid, p_cutoff timestamptz)
returns boolean
language plpgsql
as $$
declare
    p        record;
    v_locked bigint;
begin
    -- a retention worker deleting its segments holds it: its turn comes next cycle
    if not pg_try_advisory_xact_lock(hashtextextended(p_partition_id::text, 47)) then
        return false;
    end if;
    -- FOR UPDATE: a push (FOR NO KEY UPDATE) waits for this transaction and then, finding no
    -- row, makes its broker resolve the partition again; one that committed first is read here.
    -- SKIP LOCKED: a partition a push or a cursor seed holds now is not inactive; nothing waits
    select lp.last_offset, lp.retained_from, lp.created_at, lp.last_write_at, lp.newest_created_at
      into p
      from queen.log_partitions lp
     where lp.id = p_partition_id
       for update skip locked;
    if not found
       or p.retained_from <= p.last_offset
       or greatest(p.created_at, p.last_write_at, p.newest_created_at) >= p_cutoff then
        return false;
    end if;
    -- the cursors locked too, and every one of them (v_locked counts those this took): one that a
    -- pop, ack or seek holds now is in use, and waiting for it behind the partition lock would
    -- stall the partition's pushes (or deadlock with a transaction that acks, then pushes)
    select count(*) into v_locked
      from (select 1 from queen.log_consumers c
             where c.partition_id = p_partition_id
               for update skip locked) x;
    if v_locked < (select count(*) from queen.log_consumers c where c.partition_id = p_partition_id)
       or exists (select 1 from queen.log_consumers c
                where c.partition_id = p_partition_id
                  and greatest(c.last_consumed_at, c.lease_acquired_at, c.lease_expires_at)
                      >= p_cutoff)
       or exists (select 1 from queen.dead_letters d where d.partition_id = p_partition_id)
       or exists (select 1 from queen.stream_state s where s.partition_id = p_partition_id) then
        return false;
    end if;
    delete from queen.log_partitions lp where lp.id = p_partition_id;
    return true;
end;
$$;

-- One page of the removal in one transaction: the next p_limit partitions in id order after
-- p_after that retain nothing and had no push since p_cutoff, each judged and removed as
-- queen.partition_remove_v1 does. Returns how many were looked at (fewer than p_limit: the last
-- page), how many removed, and the last id looked at (where the next page starts). A page is one
-- round trip, where a call per partition kept the cycle from keeping up with a partition per push.
create or replace function queen.partition_cleanup_v1(
    p_cutoff timestamptz, p_after uuid, p_limit integer)
returns table (examined integer, removed integer, last_id uuid)
language plpgsql
as $$
declare
    v_examined integer := 0;
    v_removed  integer := 0;
    v_last     uuid;
begin
    -- the candidates in one statement; on Citus one per shard, merged in id order
    for v_last in
        select p.id
          from queen.log_partitions p
         where p.id > coalesce(p_after, '00000000-0000-0000-0000-000000000000'::uuid)
           and p.retained_from > p.last_offset
           and greatest(p.created_at, p.last_write_at, p.newest_created_at) < p_cutoff
           -- kept for good while they last: not locked again every cycle
           and not exists (select 1 from queen.dead_letters d where d.partition_id = p.id)
           and not exists (select 1 from queen.stream_state s where s.partition_id = p.id)
         order by p.id
         limit p_limit
    loop
        v_examined := v_examined + 1;
        if queen.partition_remove_v1(v_last, p_cutoff) then
            v_removed := v_removed + 1;
        end if;
    end loop;
    return query select v_examined, v_removed, v_last;
end;
$$;
