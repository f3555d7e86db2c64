-- Push: one segment per (push, partition), offsets taken under the partition row lock.

-- Appends segments in one statement's worth of work, however many segments and messages: in the
-- common case three statements (offsets, transactionId index, segments). Per segment: its
-- partition, message count and blob; per message, in segment order: its segment (1-based), its
-- position in the segment, transaction id and message id. Several segments may name one
-- partition: they get consecutive ranges in array order. The caller guarantees that no
-- transaction id occurs twice within one partition in a call.
--
-- Answers each segment's base offset. Writes nothing and raises instead when
--   QN001  a partition no longer exists (its queue was deleted since the caller resolved it);
--   QN002  a transaction id is already stored in its partition: the caller looks the duplicates
--          up (queen.log_duplicates_v1), removes them and calls again.
drop function if exists queen.log_push_v1(uuid[], integer[], bytea[], integer[], integer[], text[], uuid[]);

create or replace function queen.log_push_v1(
    p_partition_ids uuid[],
    p_counts integer[],
    p_blobs bytea[],
    p_msg_seg integer[],
    p_msg_idx integer[],
    p_txn_ids text[],
    p_msg_ids uuid[])
returns table (seg integer, base_offset bigint)
language plpgsql
as $$
#variable_conflict use_column
declare
    v_wanted   integer;
    v_bumped   integer;
    v_messages integer := coalesce(array_length(p_txn_ids, 1), 0);
    v_indexed  integer;
    v_bases    bigint[];
    v_ats      timestamptz[];
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
               -- quantized: most pushes leave the indexed column alone, keeping updates HOT
               last_write_at = greatest(p.last_write_at, date_trunc('second', clock_timestamp()))
          from per_partition pp
         where p.id = pp.pid
        returning p.id, p.last_offset - pp.n as prev_end, p.newest_created_at as at)
    select array_agg(s.base order by s.seg), array_agg(s.at order by s.seg), count(distinct s.pid)
      into v_bases, v_ats, v_bumped
      from (select u.seg, u.pid,
                   b.prev_end + 1
                     + coalesce(sum(u.cnt) over (partition by u.pid order by u.seg
                                                 rows between unbounded preceding and 1 preceding), 0)
                     as base,
                   b.at
              from unnest(p_partition_ids, p_counts) with ordinality as u(pid, cnt, seg)
              join bumped b on b.id = u.pid) s;
    if v_bumped < v_wanted then
        -- a partition no longer exists (its queue was deleted): nothing may be written
        raise exception using errcode = 'QN001', message = 'missing partition';
    end if;

    -- Dedup under the locks: every push that committed before us is visible here, and no other
    -- push of these partitions can be in flight, so ON CONFLICT never waits.
    insert into queen.log_txn_ids (partition_id, transaction_id, msg_offset, message_id)
    select p_partition_ids[u.seg], u.txn, v_bases[u.seg] + u.idx, u.msg
      from unnest(p_msg_seg, p_msg_idx, p_txn_ids, p_msg_ids) as u(seg, idx, txn, msg)
    on conflict (partition_id, transaction_id) do nothing;
    get diagnostics v_indexed = row_count;
    if v_indexed < v_messages then
        -- Some are stored already: report them and write nothing (the exception rolls back the
        -- offsets and the index rows of this call); the caller removes them and calls again.
        raise exception using errcode = 'QN002', message = 'duplicates';
    end if;

    insert into queen.log_segments (partition_id, base_offset, end_offset, msg_count, created_at, blob)
    select u.pid, v_bases[u.seg], v_bases[u.seg] + u.cnt - 1, u.cnt, v_ats[u.seg], u.blob
      from unnest(p_partition_ids, p_counts, p_blobs) with ordinality as u(pid, cnt, blob, seg);

    return query
    select u.seg::integer, v_bases[u.seg]
      from generate_series(1, coalesce(array_length(p_partition_ids, 1), 0)) as u(seg);
end;
$$;

-- The transaction ids among the given (partition, transaction id) pairs that are already stored,
-- with the message that owns each: what a push that raised QN002 must leave out.
create or replace function queen.log_duplicates_v1(p_partition_ids uuid[], p_txn_ids text[])
returns table (partition_id uuid, transaction_id text, message_id uuid)
language sql
stable
as $$
    select t.partition_id, t.transaction_id, t.message_id
      from unnest(p_partition_ids, p_txn_ids) as u(pid, txn)
      join queen.log_txn_ids t on t.partition_id = u.pid and t.transaction_id = u.txn
$$;
