-- The transactionId index (queen.log_txn_index): exactly-once push and acks by transactionId, at
-- about 16 bytes a message. Pages of one partition tile the 64-bit hash space; a page holds
-- (hash, offset) pairs interleaved, newest first, at most 64 pairs.

-- The hash the index is keyed by. A match is only a candidate: the broker reads the stored frame
-- before it calls anything a duplicate. Tests replace this function to force collisions.
create or replace function queen.txn_hash(p_transaction_id text)
returns bigint
language sql
immutable
parallel safe
as $$
    select hashtextextended(p_transaction_id, 0)
$$;

-- The pairs of a page at or above the retention watermark. Pairs are newest first, so the dead
-- ones are a suffix: one comparison in the common case of a page with nothing dead.
create or replace function queen.txn_live(p_entries bigint[], p_retained bigint)
returns bigint[]
language sql
immutable
parallel safe
as $$
    select case
        when p_retained <= 0 or p_entries[cardinality(p_entries)] >= p_retained then p_entries
        else p_entries[1 : 2 * (select count(*) from generate_series(2, cardinality(p_entries), 2) as g(i)
                                 where p_entries[g.i] >= p_retained)::integer]
    end
$$;

-- The live offsets whose transactionId hashes to p_hash in a partition: usually none or one; more
-- only on a hash collision, which the caller resolves against the frames.
create or replace function queen.log_txn_offsets_v1(p_partition_id uuid, p_hash bigint, p_retained bigint)
returns setof bigint
language sql
stable
as $$
    select t.entries[2 * e.i]
      from (select x.entries from queen.log_txn_index x
             where x.partition_id = p_partition_id and x.lo <= p_hash
             order by x.lo desc
             limit 1) t
     cross join lateral generate_series(1, cardinality(t.entries) / 2) as e(i)
     where p_hash = any (t.entries)
       and t.entries[2 * e.i - 1] = p_hash
       and t.entries[2 * e.i] >= p_retained
$$;

-- For each (partition, transactionId) pair given, every live message whose transactionId has the
-- same hash, with the segment that holds it: the broker decodes the frame to tell the message that
-- really carries the transactionId from a hash collision.
create or replace function queen.log_txn_candidates_v1(p_partition_ids uuid[], p_txn_ids text[])
returns table (idx integer, msg_offset bigint, base_offset bigint, blob bytea)
language sql
stable
as $$
    select (u.i - 1)::integer, o.off, s.base_offset, s.blob
      from unnest(p_partition_ids, p_txn_ids) with ordinality as u(pid, txn, i)
      join queen.log_partitions p on p.id = u.pid
     cross join lateral queen.log_txn_offsets_v1(u.pid, queen.txn_hash(u.txn), p.retained_from) as o(off)
     cross join lateral (select ls.base_offset, ls.msg_count, ls.blob from queen.log_segments ls
                          where ls.partition_id = u.pid and ls.base_offset <= o.off
                          order by ls.base_offset desc
                          limit 1) s
     where s.base_offset + s.msg_count > o.off
     order by u.i, o.off
$$;

-- Adds (hash, offset) pairs to the index. The caller holds the row locks of the partitions, so no
-- other writer touches their pages. The common case is one statement: each page that still fits
-- gets its new pairs prepended (and its dead pairs dropped). A page that would pass 64 pairs, or a
-- partition without pages yet, is rebuilt into pages of about 32 pairs, cut between distinct hashes
-- so that equal hashes share a page.
create or replace function queen.log_txn_add_v1(p_partition_ids uuid[], p_hashes bigint[], p_offsets bigint[])
returns void
language plpgsql
as $$
#variable_conflict use_column
declare
    c_max    constant integer := 64;
    c_half   constant integer := 32;
    c_first  constant bigint := -9223372036854775808;
    v_pids   uuid[];
    v_los    bigint[];
    v_all    bigint[];
    v_i      integer;
    v_lo     bigint;
    g        record;
begin
    with placed as (
        select u.pid, u.h, u.off, pg.lo
          from unnest(p_partition_ids, p_hashes, p_offsets) as u(pid, h, off)
          left join lateral (select t.lo from queen.log_txn_index t
                              where t.partition_id = u.pid and t.lo <= u.h
                              order by t.lo desc
                              limit 1) pg on true),
    grouped as (
        select pl.pid, pl.lo, count(*)::integer as n,
               array_agg(v.x order by pl.off desc, v.n) as pairs
          from placed pl
         cross join lateral (values (1, pl.h), (2, pl.off)) as v(n, x)
         group by pl.pid, pl.lo),
    fitted as (
        update queen.log_txn_index t
           set entries = g.pairs || queen.txn_live(t.entries, p.retained_from)
          from grouped g
          join queen.log_partitions p on p.id = g.pid
         where t.partition_id = g.pid and t.lo = g.lo
           and g.n + cardinality(queen.txn_live(t.entries, p.retained_from)) / 2 <= c_max
        returning t.partition_id, t.lo)
    select array_agg(g.pid), array_agg(g.lo)
      into v_pids, v_los
      from grouped g
     where not exists (select 1 from fitted f where f.partition_id = g.pid and f.lo = g.lo);

    -- the rare path: pages that overflow, and first pages
    for v_i in 1 .. coalesce(cardinality(v_pids), 0) loop
        v_lo := coalesce(v_los[v_i], c_first);
        select coalesce(array_agg(v.x order by u.off desc, v.n), '{}') into v_all
          from unnest(p_partition_ids, p_hashes, p_offsets) as u(pid, h, off)
         cross join lateral (values (1, u.h), (2, u.off)) as v(n, x)
         where u.pid = v_pids[v_i]
           and u.h >= v_lo
           and u.h < coalesce((select t.lo from queen.log_txn_index t
                                where t.partition_id = u.pid and t.lo > v_lo
                                order by t.lo
                                limit 1), 9223372036854775807);
        v_all := v_all || coalesce((select queen.txn_live(t.entries, p.retained_from)
                                      from queen.log_txn_index t
                                      join queen.log_partitions p on p.id = t.partition_id
                                     where t.partition_id = v_pids[v_i] and t.lo = v_los[v_i]), '{}');
        for g in
            with pairs as (
                select v_all[2 * e.i - 1] as h, v_all[2 * e.i] as off, e.i
                  from generate_series(1, cardinality(v_all) / 2) as e(i)),
            ranked as (
                select h, off, row_number() over (order by h, off) as rn from pairs),
            pieced as (
                select h, off,
                       case when cardinality(v_all) / 2 <= c_max then 0
                            else (min(rn) over (partition by h) - 1) / c_half end as piece
                  from ranked)
            select pc.piece, min(pc.h) as lo,
                   array_agg(v.x order by pc.off desc, v.n) as entries
              from pieced pc
             cross join lateral (values (1, pc.h), (2, pc.off)) as v(n, x)
             group by pc.piece
             order by pc.piece
        loop
            if g.piece = 0 and v_los[v_i] is not null then
                update queen.log_txn_index t set entries = g.entries
                 where t.partition_id = v_pids[v_i] and t.lo = v_lo;
            else
                insert into queen.log_txn_index (partition_id, lo, entries)
                values (v_pids[v_i], case when g.piece = 0 then v_lo else g.lo end, g.entries);
            end if;
        end loop;
    end loop;
end;
$$;
