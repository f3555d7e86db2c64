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
    p_known_offsets bigint[] default '{}')
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
    v_wanted   integer;
    v_bumped   integer;
    v_bases    bigint[];
    v_ats      timestamptz[];
    v_retained bigint[];
begin
    select count(distinct u.pid) into v_wanted from unnest(p_partition_ids) as u(pid);
    if v_wanted > 1 then
        -- Several partitions: lock them in id order first, the one order all pushers use, so
        -- concurrent multi-partition pushes cannot deadlock. (One partition needs no ordering:
        -- the update below takes its lock.)
        perform 1 from queen.log_partitions p
         where p.id = any (p_partition_ids)
         order by p.id
           for no key update;
    end if;

    -- Offsets: each partition's last_offset grows by its messages in this call, under the row
    -- lock that serializes pushes to the partition: offset order is commit order, so a consumer
    -- can never commit past a push that commits late. created_at is stamped under the lock
    -- (clock_timestamp, never below the newest segment's) because now() is the transaction start
    -- and a push that waited for the lock would go back in time.
    with per_partition as (
        select u.pid, sum(u.cnt)::bigint as n
          from unnest(p_partition_ids, p_counts) as u(pid, cnt)
         group by u.pid),
    bumped as (
        update queen.log_partitions p
           set last_offset = p.last_offset + pp.n,
               newest_created_at = greatest(clock_timestamp(), p.newest_created_at),
                              -- rounded: most pushes leave the indexed column alone, keeping updates HOT
               last_write_at = greatest(p.last_write_at, queen.write_mark(clock_timestamp()))

          from per_partition pp
         where p.id = pp.pid
        returning p.id, p.last_offset - pp.n as prev_end, p.newest_created_at as at, p.retained_from)
    select array_agg(s.base order by s.seg), array_agg(s.at order by s.seg),
           array_agg(s.retained_from order by s.seg), count(distinct s.pid)
      into v_bases, v_ats, v_retained, v_bumped
      from (select u.seg, u.pid,
                   b.prev_end + 1
                     + coalesce(sum(u.cnt) over (partition by u.pid order by u.seg
                                                 rows between unbounded preceding and 1 preceding), 0)
                     as base,
                   b.at, b.retained_from
              from unnest(p_partition_ids, p_counts) with ordinality as u(pid, cnt, seg)
              join bumped b on b.id = u.pid) s;
    if v_bumped < v_wanted then
        -- a partition no longer exists (its queue was deleted): nothing may be written
        raise exception using errcode = 'QN001', message = 'missing partition';
    end if;

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

    insert into queen.log_segments (partition_id, base_offset, msg_count, created_at, blob)
    select u.pid, v_bases[u.seg], u.cnt, v_ats[u.seg], u.blob
      from unnest(p_partition_ids, p_counts, p_blobs) with ordinality as u(pid, cnt, blob, seg);

    return query
    select u.seg::integer, v_bases[u.seg], v_ats[u.seg]
      from generate_series(1, coalesce(array_length(p_partition_ids, 1), 0)) as u(seg);
end;
$$;
