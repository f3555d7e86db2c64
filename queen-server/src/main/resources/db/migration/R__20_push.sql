-- Push: one segment per (push, partition), offsets taken under the partition row lock.

-- Appends segments in one statement's worth of work, however many segments and messages. Per
-- segment: its partition, message count and blob; per message, in segment order: its segment
-- (1-based), its position in the segment and its transaction id. Several segments may name one
-- partition: they get consecutive ranges in array order. The caller guarantees that no transaction
-- id occurs twice within one partition in a call. p_known_* lists stored messages whose
-- transactionId hashes like a new one but that the caller read and found to be other messages
-- (hash collisions): they do not stop the push.
--
-- Answers each segment's base offset and created_at (the broker derives message ids from them).
-- Writes nothing and raises instead when
--   QN001  a partition no longer exists (its queue was deleted since the caller resolved it);
--   QN002  a stored message of a partition has the hash of a new transaction id: the caller reads
--          the candidates (queen.log_txn_candidates_v1), removes the real duplicates, lists the
--          collisions in p_known_* and calls again.
-- The write mark kept in log_partitions.last_write_at for the wildcard scan's watermark: the push
-- time rounded down to 30 s, so that the indexed column changes at most twice a minute per
-- partition and every other push updates the partition row HOT. The scan's 2 minutes of slack
-- absorb the rounding (at 1-second rounding a partition pushed once a second had no HOT update).
create or replace function queen.write_mark(p_at timestamptz)
returns timestamptz
language sql
immutable
parallel safe
as $$
    select to_timestamp(floor(extract(epoch from p_at) / 30) * 30)
$$;

drop function if exists queen.log_push_v1(uuid[], integer[], bytea[], integer[], integer[], text[], uuid[]);
drop function if exists queen.log_push_v1(uuid[], integer[], bytea[], integer[], integer[], text[], uuid[], bigint[]);
drop function if exists queen.log_duplicates_v1(uuid[], text[]);

create or replace function queen.log_push_v1(
    p_partition_ids uuid[],
    p_counts integer[],
    p_blobs bytea[],
    p_msg_seg integer[],
    p_msg_idx integer[],
    p_txn_ids text[],
    p_known_pids uuid[] default '{}',
    p_known_offsets bigint[] default '{}',
    p_raw_bytes integer[] default null)
returns table (seg integer, base_offset bigint, created_at timestamptz)
language plpgsql
-- no JIT: default row estimates over arrays trip it for statements that run in a millisecond
set jit = off
-- plan once per session: these statements take longer to plan than to run
set plan_cache_mode = force_generic_plan
-- key lookups only: a plan made while a table was still small must not scan it once it is large
-- (a session opened on an empty database kept sequential scans and pushed 2x slower 40 s later)
set enable_seqscan = off
as $$
#variable_conflict use_column
declare
    v_pids     uuid[];
    v_ns       bigint[];
    v_pid      uuid;
    v_now      timestamptz;
    v_mark     timestamptz;
    r          record;
    v_ids      uuid[] := '{}';
    v_lasts    bigint[] := '{}';
    v_newest   timestamptz[] := '{}';
    v_floors   bigint[] := '{}';
    v_bases    bigint[];
    v_ats      timestamptz[];
    v_retained bigint[];
begin
    select array_agg(x.pid order by x.pid), array_agg(x.n order by x.pid)
      into v_pids, v_ns
      from (select u.pid, sum(u.cnt)::bigint as n
              from unnest(p_partition_ids, p_counts) as u(pid, cnt)
             group by u.pid) x;

    -- Lock the partitions in id order, the one order all pushers use, so concurrent
    -- multi-partition pushes cannot deadlock: one statement, or one per partition where Citus
    -- refuses to lock rows of several shards at once.
    if not queen.distributed() then
        perform 1 from queen.log_partitions p where p.id = any (v_pids) order by p.id for no key update;
    else
        foreach v_pid in array v_pids loop
            perform 1 from queen.log_partitions p where p.id = v_pid for no key update;
        end loop;
    end if;
    -- created_at is stamped under the locks because now() is the transaction start and a push
    -- that waited for a lock would go back in time; never below the partition's newest segment's.
    -- Taken once, into a variable: Citus refuses clock_timestamp() inside a distributed UPDATE.
    v_now := clock_timestamp();
    v_mark := queen.write_mark(v_now);

    -- Offsets: each partition's last_offset grows by its messages in this call, under the row
    -- lock that serializes pushes to the partition: offset order is commit order, so a consumer
    -- can never commit past a push that commits late. The filter by id lets Citus route the
    -- statement to the workers of these partitions only.
    -- (A loop over the statement, not a data-modifying CTE: Citus cannot plan that one.)
    for r in
        update queen.log_partitions p
           set last_offset = p.last_offset + v_ns[array_position(v_pids, p.id)],
               newest_created_at = greatest(v_now, p.newest_created_at),
               -- rounded: most pushes leave the indexed column alone, keeping updates HOT
               last_write_at = greatest(p.last_write_at, v_mark)
         where p.id = any (v_pids)
        returning p.id, p.last_offset, p.newest_created_at, p.retained_from
    loop
        v_ids := v_ids || r.id;
        v_lasts := v_lasts || r.last_offset;
        v_newest := v_newest || r.newest_created_at;
        v_floors := v_floors || r.retained_from;
    end loop;
    if coalesce(array_length(v_ids, 1), 0) < coalesce(array_length(v_pids, 1), 0) then
        -- a partition no longer exists (its queue was deleted): nothing may be written
        raise exception using errcode = 'QN001', message = 'missing partition';
    end if;

    -- each segment's base: after the partition's previous end and the earlier segments of this call
    select array_agg(s.base order by s.seg), array_agg(s.at order by s.seg),
           array_agg(s.retained_from order by s.seg)
      into v_bases, v_ats, v_retained
      from (select u.seg,
                   b.last_offset - v_ns[array_position(v_pids, u.pid)] + 1
                     + coalesce(sum(u.cnt) over (partition by u.pid order by u.seg
                                                 rows between unbounded preceding and 1 preceding), 0)
                     as base,
                   b.at, b.retained_from
              from unnest(p_partition_ids, p_counts) with ordinality as u(pid, cnt, seg)
              join unnest(v_ids, v_lasts, v_newest, v_floors) as b(id, last_offset, at, retained_from)
                on b.id = u.pid) s;

    -- Dedup under the locks: every push that committed before us is visible here, and no other
    -- push of these partitions can be in flight. A hash match is only a candidate; the broker
    -- tells a duplicate from a collision by reading the stored frame. The index adds the new
    -- pairs, or raises QN002 and adds nothing.
    perform queen.log_txn_add_v1(
        array_agg(p_partition_ids[u.seg] order by u.k),
        array_agg(queen.txn_hash(u.txn) order by u.k),
        array_agg(v_bases[u.seg] + u.idx order by u.k),
        array_agg(v_retained[u.seg] order by u.k),
        p_known_pids,
        p_known_offsets)
      from unnest(p_msg_seg, p_msg_idx, p_txn_ids) with ordinality as u(seg, idx, txn, k);

    insert into queen.log_segments (partition_id, base_offset, msg_count, created_at, blob, raw_bytes)
    select u.pid, v_bases[u.seg], u.cnt, v_ats[u.seg], u.blob, u.raw
      from unnest(p_partition_ids, p_counts, p_blobs, p_raw_bytes)
           with ordinality as u(pid, cnt, blob, raw, seg);

    return query
    select u.seg::integer, v_bases[u.seg], v_ats[u.seg]
      from generate_series(1, coalesce(array_length(p_partition_ids, 1), 0)) as u(seg);
end;
$$;
