-- Push: one segment per (push, partition), offsets taken under the partition row lock.

-- Appends segments in one transaction with a constant number of statements, however many
-- segments and messages. Per segment: its partition, message count and blob; per message, in
-- segment order: its segment (1-based), its position in the segment, transaction id and message
-- id. Several segments may name one partition: they get consecutive ranges in array order.
--
-- Answers one of:
--   'queued' per segment with its base offset: everything was written;
--   'duplicate' rows (segment, transaction id, owning message id) for transaction ids already
--     stored in their partition: nothing was written, the locks are held, and the caller calls
--     again in the same transaction with those messages removed;
--   'missing' rows for segments whose partition no longer exists (queue deleted): nothing written.
-- The caller guarantees that no transaction id occurs twice within one partition in a call.
create or replace function queen.log_push_v1(
    p_partition_ids uuid[],
    p_counts integer[],
    p_blobs bytea[],
    p_msg_seg integer[],
    p_msg_idx integer[],
    p_txn_ids text[],
    p_msg_ids uuid[])
returns table (seg integer, status text, base_offset bigint, dup_txn_id text, dup_msg_id uuid)
language plpgsql
as $$
#variable_conflict use_column
declare
    v_wanted integer;
    v_locked integer;
    v_bases  bigint[];
    v_ats    timestamptz[];
begin
    -- Lock every partition of the call in id order, the one order all pushers use, so concurrent
    -- multi-partition pushes cannot deadlock. The lock serializes pushes per partition: offset
    -- order is commit order, so a consumer can never commit past a push that commits late.
    select count(distinct u.pid) into v_wanted from unnest(p_partition_ids) as u(pid);
    select count(*) into v_locked
      from (select p.id from queen.log_partitions p
             where p.id = any (p_partition_ids)
             order by p.id
               for no key update) l;
    if v_locked < v_wanted then
        return query
        select u.seg::integer, 'missing'::text, null::bigint, null::text, null::uuid
          from unnest(p_partition_ids) with ordinality as u(pid, seg)
         where not exists (select 1 from queen.log_partitions p where p.id = u.pid);
        return;
    end if;

    -- Dedup under the locks: every push that committed before us is visible to this statement.
    return query
    select u.seg, 'duplicate'::text, null::bigint, t.transaction_id, t.message_id
      from unnest(p_msg_seg, p_txn_ids) as u(seg, txn)
      join queen.log_txn_ids t
        on t.partition_id = p_partition_ids[u.seg] and t.transaction_id = u.txn;
    if found then
        return;
    end if;

    -- Offsets: each partition's last_offset grows by its messages in this call. created_at is
    -- stamped under the lock (clock_timestamp, never below the newest segment's) because now()
    -- is the transaction start and a push that waited for the lock would go back in time.
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
    select array_agg(s.base order by s.seg), array_agg(s.at order by s.seg)
      into v_bases, v_ats
      from (select u.seg,
                   b.prev_end + 1
                     + coalesce(sum(u.cnt) over (partition by u.pid order by u.seg
                                                 rows between unbounded preceding and 1 preceding), 0)
                     as base,
                   b.at
              from unnest(p_partition_ids, p_counts) with ordinality as u(pid, cnt, seg)
              join bumped b on b.id = u.pid) s;

    insert into queen.log_segments (partition_id, base_offset, end_offset, msg_count, created_at, blob)
    select u.pid, v_bases[u.seg], v_bases[u.seg] + u.cnt - 1, u.cnt, v_ats[u.seg], u.blob
      from unnest(p_partition_ids, p_counts, p_blobs) with ordinality as u(pid, cnt, blob, seg);

    insert into queen.log_txn_ids (partition_id, transaction_id, msg_offset, message_id)
    select p_partition_ids[u.seg], u.txn, v_bases[u.seg] + u.idx, u.msg
      from unnest(p_msg_seg, p_msg_idx, p_txn_ids, p_msg_ids) as u(seg, idx, txn, msg);

    return query
    select u.seg::integer, 'queued'::text, v_bases[u.seg], null::text, null::uuid
      from generate_series(1, coalesce(array_length(p_partition_ids, 1), 0)) as u(seg);
end;
$$;
