-- Leases: extending them (renewal) without touching the cursor.

-- Extends every live lease held by one worker id (all partitions of a multi-partition pop) to
-- max(current expiry, now + seconds). Answers the new expiry, or why nothing was extended. The
-- broker that issued the lease passes its partitions, and the rows are found by primary key;
-- without them, the cursor table is scanned (no index on worker_id: it would change on every
-- lease and ack, and no cursor update could be HOT). Either way the rows are updated one
-- partition at a time in id order, the order of acks: one statement over all of them locked them
-- in the scan's order, and met an ack of the same lease locking them the other way (a deadlock).
drop function if exists queen.log_extend_lease_v1(uuid, integer, timestamptz);

create or replace function queen.log_extend_lease_v1(
    p_worker uuid, p_seconds integer, p_partitions uuid[] default null, p_now timestamptz default null)
returns table (status text, expires_at timestamptz)
language plpgsql
as $$
#variable_conflict use_column
declare
    v_now     timestamptz := coalesce(p_now, now());
    v_until   timestamptz := v_now + make_interval(secs => p_seconds);
    v_expires timestamptz;
    v_one     timestamptz;
    v_seen    boolean;
    v_pid     uuid;
    v_pids    uuid[] := '{}';
begin
    -- two statements, never "p_partitions is null or ...": a connection's generic plan of the OR
    -- (after five calls without the partitions, behind a load balancer) scanned the whole cursor
    -- table for the extends that name them too
    if p_partitions is null then
        for v_pid in
            select distinct c.partition_id from queen.log_consumers c
             where c.worker_id = p_worker
             order by 1
        loop
            v_pids := v_pids || v_pid;
        end loop;
    else
        for v_pid in
            select distinct c.partition_id from queen.log_consumers c
             where c.partition_id = any (p_partitions) and c.worker_id = p_worker
             order by 1
        loop
            v_pids := v_pids || v_pid;
        end loop;
    end if;
    foreach v_pid in array v_pids
    loop
        v_seen := true;
        update queen.log_consumers c
           set lease_expires_at = greatest(c.lease_expires_at, v_until)
         where c.partition_id = v_pid and c.worker_id = p_worker and c.lease_expires_at > v_now
        returning c.lease_expires_at into v_one;
        v_expires := greatest(v_expires, v_one);
    end loop;
    if v_expires is not null then
        return query select 'extended'::text, v_expires;
    elsif v_seen then
        return query select 'expired'::text, null::timestamptz;
    else
        return query select 'missing'::text, null::timestamptz;
    end if;
end;
$$;
