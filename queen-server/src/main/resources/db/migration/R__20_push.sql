-- Push: one segment per (push, partition), offsets taken under the partition row lock.

-- Appends segments to partitions in one transaction. Arrays are aligned per segment; the
-- transaction and message ids of all segments are flattened, segment i owning
-- p_txn_ids[p_msg_start[i] : p_msg_start[i] + p_counts[i] - 1].
--
-- Per segment it returns either the base offset it was written at, or, when some of its
-- transaction ids are already stored in that partition, the duplicates with the ids of the
-- messages that own them and nothing written for that segment: the broker re-encodes the segment
-- without them and calls again in the same transaction, still holding the partition lock.
-- A partition id that no longer exists (its queue was deleted) answers 'missing'.
-- The caller must pass segments ordered by partition id: a stable lock order means two
-- concurrent multi-partition pushes cannot deadlock.
create or replace function queen.log_push_v1(
    p_partition_ids uuid[],
    p_counts integer[],
    p_blobs bytea[],
    p_msg_start integer[],
    p_txn_ids text[],
    p_msg_ids uuid[])
returns table (seg integer, status text, base_offset bigint,
               dup_txn_ids text[], dup_msg_ids uuid[])
language plpgsql
as $$
#variable_conflict use_column
declare
    i       integer;
    v_pid   uuid;
    v_n     integer;
    v_from  integer;
    v_to    integer;
    v_end   bigint;
    v_at    timestamptz;
    v_dtx   text[];
    v_dmsg  uuid[];
begin
    for i in 1 .. coalesce(array_length(p_partition_ids, 1), 0) loop
        v_pid := p_partition_ids[i];
        v_n := p_counts[i];
        v_from := p_msg_start[i];
        v_to := v_from + v_n - 1;

        -- Offsets are taken by this update, which also takes the row lock that serializes pushes to
        -- the partition: offset order is commit order, so a consumer can never commit past a push
        -- that commits late. created_at is stamped under the lock (clock_timestamp, never below
        -- the newest segment's) because now() is the transaction start and would go backwards.
        update queen.log_partitions p
           set last_offset = p.last_offset + v_n,
               newest_created_at = greatest(clock_timestamp(), p.newest_created_at),
               last_write_at = greatest(p.last_write_at,
                                        date_trunc('second', greatest(clock_timestamp(), p.newest_created_at)))
         where p.id = v_pid
        returning p.last_offset, p.newest_created_at into v_end, v_at;
        if not found then
            return query select i, 'missing'::text, null::bigint, null::text[], null::uuid[];
            continue;
        end if;

        -- Dedup under the lock: every push that committed before us is visible to this statement.
        select array_agg(t.transaction_id), array_agg(t.message_id) into v_dtx, v_dmsg
          from queen.log_txn_ids t
         where t.partition_id = v_pid and t.transaction_id = any (p_txn_ids[v_from:v_to]);
        if v_dtx is not null then
            -- give the offsets back; nobody else can have seen them while we hold the lock
            update queen.log_partitions p set last_offset = p.last_offset - v_n where p.id = v_pid;
            return query select i, 'duplicate'::text, null::bigint, v_dtx, v_dmsg;
            continue;
        end if;

        insert into queen.log_segments (partition_id, base_offset, end_offset, msg_count, created_at, blob)
        values (v_pid, v_end - v_n + 1, v_end, v_n, v_at, p_blobs[i]);

        insert into queen.log_txn_ids (partition_id, transaction_id, msg_offset, message_id)
        select v_pid, u.txn, v_end - v_n + u.ord, u.msg
          from unnest(p_txn_ids[v_from:v_to], p_msg_ids[v_from:v_to]) with ordinality as u(txn, msg, ord);

        return query select i, 'queued'::text, v_end - v_n + 1, null::text[], null::uuid[];
    end loop;
end;
$$;
