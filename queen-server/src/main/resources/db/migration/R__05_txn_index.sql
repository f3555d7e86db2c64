-- The transactionId index (queen.log_txn_index): exactly-once push and acks by transactionId, at
-- about 16 bytes a message. Pages of one partition tile the 64-bit hash space; a page holds
-- (hash, offset) pairs interleaved, newest first, at most 112 pairs.

-- Whether the log is distributed (Citus). Citus routes a statement to one worker only when it
-- names partitions of one shard, so there the multi-partition statements run once per partition
-- (or per shard); on plain PostgreSQL one statement serves all the partitions of a call.
--
-- A constant, pinned from the catalog by queen.pin_distributed() here and after every migration
-- (afterMigrate__citus_plans.sql): the catalog lookup it replaces ran three times a push and took
-- a tenth of its time, while the answer changes only when a database gets Citus, with brokers
-- stopped and started again.
create or replace function queen.pin_distributed()
returns void
language plpgsql
as $$
declare
    v_body text := format(' select %s ', exists (select 1 from pg_extension where extname = 'citus')::text);
begin
    -- brokers starting together pin at once: one at a time, and only a changed answer is written
    perform pg_advisory_xact_lock(hashtext('queen.pin_distributed'));
    if exists (select 1 from pg_proc p
                where p.oid = to_regprocedure('queen.distributed()')
                  and p.provolatile = 'i'
                  and p.prosrc = v_body) then
        return;
    end if;
    execute format('create or replace function queen.distributed() returns boolean '
                   'language sql immutable parallel safe as %L', v_body);
end;
$$;

select queen.pin_distributed();

-- The passes of a statement over several partitions, in id order: each partition id where the log
-- is distributed, else one null meaning "all of them". Such a statement filters by
-- coalesce(pass, x.partition_id), never "pass is null or ...": the OR kept the generic plan off
-- the primary key (10x slower on plain PostgreSQL), and Citus routes the coalesce form too.
create or replace function queen.partition_passes(p_ids uuid[])
returns setof uuid
language sql
stable
as $$
    select x.id
      from (select distinct u.id from unnest(p_ids) as u(id) where queen.distributed()
            union all
            select null::uuid where not queen.distributed()) x
     order by 1
$$;

-- The passes of a read over several partitions that need not name each one: the ids grouped by
-- shard where the log is distributed (a statement whose every table is filtered by one shard's
-- ids goes to that shard's worker alone), else one null meaning "all of them". A page of messages
-- read partition by partition on Citus took a statement per partition (2 s for 200 newest at
-- 1,000 partitions); by shard, at most one per shard. Such a statement keeps each table's join on
-- the partition id and adds "grp is null or id = any (grp)" beside it: a filter next to the index
-- condition, never the condition itself (see above). plpgsql: the Citus function is only resolved
-- where Citus is installed.
create or replace function queen.shard_groups(p_ids uuid[])
returns setof uuid[]
language plpgsql
stable
as $$
begin
    if not queen.distributed() then
        return next null::uuid[];
        return;
    end if;
    return query
    select array_agg(u.id order by u.id)
      from (select distinct x.id from unnest(p_ids) as x(id)) u
     group by get_shard_id_for_distribution_column('queen.log_partitions', u.id)
     order by 1;
end;
$$;

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
language plpgsql
stable
as $$
#variable_conflict use_column
begin
    return query
    select t.entries[2 * e.i]
      from (select x.entries from queen.log_txn_index x
             where x.partition_id = p_partition_id and x.lo <= p_hash
             order by x.lo desc
             limit 1) t
     cross join lateral generate_series(1, cardinality(t.entries) / 2) as e(i)
     where p_hash = any (t.entries)
       and t.entries[2 * e.i - 1] = p_hash
       and t.entries[2 * e.i] >= p_retained;
end;
$$;

-- For each (partition, transactionId) pair given (idx from 0), every live message whose
-- transactionId has the same hash: the broker reads their segments, each once, and decodes the
-- frame to tell the message that really carries the transactionId from a hash collision.
create or replace function queen.log_txn_candidates_v2(p_partition_ids uuid[], p_txn_ids text[])
returns table (idx integer, msg_offset bigint)
language plpgsql
-- no JIT: default row estimates over arrays trip it for statements that run in a millisecond
set jit = off
stable
as $$
#variable_conflict use_column
declare
    u          record;
    v_retained bigint;
begin
    -- one partition per statement (on Citus: one worker each)
    for u in
        select t.pid, t.txn, t.i from unnest(p_partition_ids, p_txn_ids) with ordinality as t(pid, txn, i)
         order by t.i
    loop
        select p.retained_from into v_retained from queen.log_partitions p where p.id = u.pid;
        continue when not found;
        return query
        select (u.i - 1)::integer, o.off
          from queen.log_txn_offsets_v1(u.pid, queen.txn_hash(u.txn), v_retained) as o(off)
         order by o.off;
    end loop;
end;
$$;

-- As log_txn_candidates_v2, each candidate with its segment (a segment's bytes once per candidate
-- it holds): the brokers of releases before v2 call it during a rolling upgrade.
drop function if exists queen.log_txn_candidates_v1(uuid[], text[]);

create or replace function queen.log_txn_candidates_v1(p_partition_ids uuid[], p_txn_ids text[])
returns table (idx integer, msg_offset bigint, base_offset bigint, created_at timestamptz, blob bytea)
language plpgsql
set jit = off
stable
as $$
#variable_conflict use_column
declare
    v_items integer[];
    v_pids  uuid[];
    v_offs  bigint[];
begin
    select coalesce(array_agg(c.idx order by c.n), '{}'),
           coalesce(array_agg(p_partition_ids[c.idx + 1] order by c.n), '{}'),
           coalesce(array_agg(c.msg_offset order by c.n), '{}')
      into v_items, v_pids, v_offs
      from queen.log_txn_candidates_v2(p_partition_ids, p_txn_ids) with ordinality as c(idx, msg_offset, n);
    return query
    select v_items[s.idx + 1], v_offs[s.idx + 1], s.base_offset, s.created_at, s.blob
      from queen.segments_at_v1(v_pids, v_offs) as s
     order by s.idx;
end;
$$;

-- Adds (hash, offset) pairs to the index; p_retained[i] is the watermark of pair i's partition.
-- The caller holds the row locks of the partitions, so no other writer touches their pages.
--
-- With p_known_pids not null it is also the dedup check: when a live pair of a page has the hash
-- of a new one and its offset is not among the known collisions (p_known_*), it adds nothing and
-- raises QN002 (see queen.log_push_v1). One probe per pair serves both.
--
-- The common case is one statement: each page that still fits gets its new pairs prepended (and
-- its dead pairs dropped). Pages that would pass 112 pairs, and first pages, are rebuilt by a
-- second statement into pages of about 32 pairs, cut between distinct hashes so that equal hashes
-- share a page. A page so splits once every 80 new pairs; at 64 pairs it split every 32, and the
-- second statement ran in about half of all pushes of 24 messages (their SQL took 1.2 ms against
-- 0.97 ms on pages with room: docs/benchmarks.md, "Push at batch 10"). 112 pairs keep a row at
-- 1.86 kB at most, under the 2 kB past which PostgreSQL would move it to TOAST, where updates
-- cannot be HOT.
drop function if exists queen.log_txn_add_v1(uuid[], bigint[], bigint[]);

create or replace function queen.log_txn_add_v1(
    p_partition_ids uuid[],
    p_hashes bigint[],
    p_offsets bigint[],
    p_retained bigint[],
    p_known_pids uuid[] default null,
    p_known_offsets bigint[] default null)
returns void
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
    c_max    constant integer := 112;
    c_half   constant integer := 32;
    c_first  constant bigint := -9223372036854775808;
    v_dup    boolean;
    v_pids   uuid[];
    v_los    bigint[];
    v_rets   bigint[];
    v_pid    uuid;
begin
    -- on Citus one partition per pass, so that Citus routes each statement whole to its worker
    for v_pid in select * from queen.partition_passes(p_partition_ids) loop
    with placed as (
        select u.pid, u.h, u.off, u.ret, pg.lo, pg.entries
          from unnest(p_partition_ids, p_hashes, p_offsets, p_retained) as u(pid, h, off, ret)
          left join lateral (select t.lo, t.entries from queen.log_txn_index t
                              where t.partition_id = coalesce(v_pid, u.pid) and t.lo <= u.h
                              order by t.lo desc
                              limit 1) pg on true
         where v_pid is null or u.pid = v_pid),
    dups as (
        select 1
          from placed pl
         where p_known_pids is not null
           and pl.h = any (pl.entries)
           and exists (select 1 from generate_series(1, cardinality(pl.entries) / 2) as e(i)
                        where pl.entries[2 * e.i - 1] = pl.h
                          and pl.entries[2 * e.i] >= pl.ret
                          and not exists (select 1 from unnest(p_known_pids, p_known_offsets) as kn(pid, off)
                                           where kn.pid = pl.pid and kn.off = pl.entries[2 * e.i]))
         limit 1),
    grouped as (
        select pl.pid, pl.lo, max(pl.ret) as ret, count(*)::integer as n,
               array_agg(v.x order by pl.off desc, v.n) as pairs
          from placed pl
         cross join lateral (values (1, pl.h), (2, pl.off)) as v(n, x)
         group by pl.pid, pl.lo),
    fitted as (
        -- pairs are newest first, so a page whose last pair is live has nothing dead to drop
        update queen.log_txn_index t
           set entries = g.pairs || case when t.entries[cardinality(t.entries)] >= g.ret then t.entries
                                         else queen.txn_live(t.entries, g.ret) end
          from grouped g
         where t.partition_id = coalesce(v_pid, g.pid) and t.lo = g.lo
           and not exists (select 1 from dups)
           and g.n + cardinality(case when t.entries[cardinality(t.entries)] >= g.ret then t.entries
                                      else queen.txn_live(t.entries, g.ret) end) / 2 <= c_max
        returning t.partition_id, t.lo),
    left_over as (
        select g.pid, g.lo, g.ret
          from grouped g
         where not exists (select 1 from fitted f where f.partition_id = g.pid and f.lo = g.lo))
    select exists (select 1 from dups),
           (select array_agg(l.pid) from left_over l),
           (select array_agg(l.lo) from left_over l),
           (select array_agg(l.ret) from left_over l)
      into v_dup, v_pids, v_los, v_rets;
    if v_dup then
        raise exception using errcode = 'QN002', message = 'duplicates';
    end if;
    if v_pids is null then
        continue;
    end if;

    -- The rare path, in one statement whatever the number of pages: each group is the range
    -- [lo, next page's lo) of one partition (lo null: the partition has no page yet).
    with lg as (
        select l.pid, l.lo, l.ret, l.gi, coalesce(l.lo, c_first) as lo_eff,
               (select t.lo from queen.log_txn_index t
                 where t.partition_id = coalesce(v_pid, l.pid)
                   and t.lo > coalesce(l.lo, c_first)
                 order by t.lo
                 limit 1) as hi
          from unnest(v_pids, v_los, v_rets) with ordinality as l(pid, lo, ret, gi)),
    pairs as (
        select lg.gi, u.h, u.off
          from lg
          join unnest(p_partition_ids, p_hashes, p_offsets) as u(pid, h, off)
            on u.pid = lg.pid and u.h >= lg.lo_eff and (lg.hi is null or u.h < lg.hi)
        union all
                select lg.gi, t.entries[2 * e.i - 1], t.entries[2 * e.i]
          from lg
          join queen.log_txn_index t
            on t.partition_id = coalesce(v_pid, lg.pid) and t.lo = lg.lo
         cross join lateral generate_series(1, cardinality(t.entries) / 2) as e(i)
         where t.entries[2 * e.i] >= lg.ret),

    ranked as (
        select pr.gi, pr.h, pr.off,
               row_number() over (partition by pr.gi order by pr.h, pr.off) as rn,
               count(*) over (partition by pr.gi) as total
          from pairs pr),
    pieced as (
        select rk.gi, rk.h, rk.off,
               case when rk.total <= c_max then 0
                    else (min(rk.rn) over (partition by rk.gi, rk.h) - 1) / c_half end as piece
          from ranked rk),
    built as (
        select pc.gi, pc.piece, min(pc.h) as lo_min,
               array_agg(v.x order by pc.off desc, v.n) as entries
          from pieced pc
         cross join lateral (values (1, pc.h), (2, pc.off)) as v(n, x)
         group by pc.gi, pc.piece),
    rewritten as (
        update queen.log_txn_index t
           set entries = b.entries
          from built b
          join lg on lg.gi = b.gi
         where b.piece = 0 and lg.lo is not null
           and t.partition_id = coalesce(v_pid, lg.pid) and t.lo = lg.lo
        returning 1)
    insert into queen.log_txn_index (partition_id, lo, entries)
    select lg.pid, case when b.piece = 0 then lg.lo_eff else b.lo_min end, b.entries
      from built b
      join lg on lg.gi = b.gi
     where b.piece > 0 or lg.lo is null;
    end loop;
end;
$$;
