-- How a pop's transaction commits. A pop that only took leases does not wait for its WAL flush:
-- a PostgreSQL crash that forgets a lease delivers its messages again (at once, not at the lease's
-- expiry), and any later flushed commit that writes (an ack, a push) flushes it first, since WAL
-- is flushed in order. A pop that seeded a cursor (a group's first contact) waits like every other
-- write: forgotten, a later first contact would seed again and could skip what was pushed in
-- between. autoAck pops, acks, pushes and everything else keep the database's synchronous_commit.
-- `queen.flush_leases = on` (alter database / alter role ... set) makes lease pops wait too.
-- A pop's other writes may be forgotten with its leases: the attempt count and batch_end of the
-- lease, the cursor seal (sealed again by the next pop), the scan watermark (a hint), the dead
-- letters an expired lease's batch takes back and a lease ended because its slices were deleted
-- (both done again by the next pop). A new write on the pop path must be one of these kinds, or
-- call queen.pop_commit_seeded_v1().

-- Called where a pop takes a lease: off unless the transaction seeded a cursor.
create or replace function queen.pop_commit_lease_v1()
returns void
language plpgsql
as $$
begin
    if coalesce(current_setting('queen.pop_seeded', true), '') <> 'on'
       and lower(coalesce(current_setting('queen.flush_leases', true), ''))
           not in ('on', 'true', 'yes', '1') then
        perform set_config('synchronous_commit', 'off', true);
    end if;
end;
$$;

-- Called where a pop seeds a cursor: the transaction waits for its flush, whatever comes after.
create or replace function queen.pop_commit_seeded_v1()
returns void
language plpgsql
as $$
begin
    perform set_config('queen.pop_seeded', 'on', true);
    set local synchronous_commit to default;
end;
$$;
