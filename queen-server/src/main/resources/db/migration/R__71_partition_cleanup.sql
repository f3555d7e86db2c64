-- Inactive partitions (PARTITION_CLEANUP_DAYS): a partition that holds no message and that nobody
-- pushed to, popped or acked for that long is removed with its cursors, so a partition per order,
-- user or job does not keep its rows (and its share of every statistics refresh) for good. Its id
-- is derived from its queue and name (queen.partition_uuid): a later push of the same name creates
-- it again under the same id, with offsets from 0.

-- A page of removal candidates in id order after p_after: nothing retained, no write since
-- p_cutoff. The cursors, leases and dead letters are judged by queen.partition_cleanup_v1.
create or replace function queen.partition_cleanup_candidates_v1(
    p_cutoff timestamptz, p_after uuid, p_limit integer)
returns setof uuid
language plpgsql
stable
as $$
#variable_conflict use_column
begin
    return query
    select p.id
      from queen.log_partitions p
     where p.id > coalesce(p_after, '00000000-0000-0000-0000-000000000000'::uuid)
       and p.retained_from > p.last_offset
       and greatest(p.created_at, p.last_write_at, p.newest_created_at) < p_cutoff
     order by p.id
     limit p_limit;
end;
$$;

-- Removes one partition when, read under its lock, it holds no message, had no push since
-- p_cutoff, and none of its cursors was created, popped or acked since then or holds a lease that
-- runs past it, and no stream updated its state of it since; a partition with dead letters stays
-- (their keys would meet the offsets of the partition pushed again). True when removed. Every row
-- naming the partition goes with it: the foreign keys cascade (on Citus too) to its cursors,
-- transactionId index, traces and stream state, so nothing of it is read again under its id.
create or replace function queen.partition_cleanup_v1(p_partition_id uuid, p_cutoff timestamptz)
returns boolean
language plpgsql
as $$
declare
    p record;
begin
    -- a retention worker deleting its segments holds it: its turn comes next cycle
    if not pg_try_advisory_xact_lock(hashtextextended(p_partition_id::text, 47)) then
        return false;
    end if;
    -- FOR UPDATE: a push (FOR NO KEY UPDATE) waits for this transaction and then, finding no
    -- row, makes its broker resolve the partition again; one that committed first is read here
    select lp.last_offset, lp.retained_from, lp.created_at, lp.last_write_at, lp.newest_created_at
      into p
      from queen.log_partitions lp
     where lp.id = p_partition_id
       for update;
    if not found
       or p.retained_from <= p.last_offset
       or greatest(p.created_at, p.last_write_at, p.newest_created_at) >= p_cutoff then
        return false;
    end if;
    -- the cursors locked first: a pop holding one finishes before they are judged
    perform 1 from queen.log_consumers c where c.partition_id = p_partition_id for update;
    if exists (select 1 from queen.log_consumers c
                where c.partition_id = p_partition_id
                  and greatest(c.created_at, c.last_consumed_at, c.lease_acquired_at,
                               c.lease_expires_at) >= p_cutoff)
       or exists (select 1 from queen.dead_letters d where d.partition_id = p_partition_id)
       or exists (select 1 from queen.stream_state s
                   where s.partition_id = p_partition_id and s.updated_at >= p_cutoff) then
        return false;
    end if;
    delete from queen.log_partitions lp where lp.id = p_partition_id;
    return true;
end;
$$;
