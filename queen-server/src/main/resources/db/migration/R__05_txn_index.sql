-- The transactionId index: exactly-once push and acks by transactionId. Each segment row keeps the
-- keys of its messages in offset order (log_segments.txn_keys), under a GIN index.

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

-- The hash of a transactionId. A match is only a candidate: the broker reads the stored frame
-- before it calls anything a duplicate. Tests replace this function to force collisions.
create or replace function queen.txn_hash(p_transaction_id text)
returns bigint
language sql
immutable
parallel safe
as $$
    select hashtextextended(p_transaction_id, 0)
$$;

-- The key a message is indexed by: its transactionId's hash xor the first 64 bits of its
-- partition's id. A transactionId reused in many partitions (a per-entity sequence number, say)
-- would otherwise give one index entry thousands of segments, each read and dropped by every
-- lookup of another partition. V17__txn_keys_in_segments.sql derived the keys of stored messages
-- from the same expression.
create or replace function queen.txn_key(p_partition_id uuid, p_transaction_id text)
returns bigint
language sql
immutable
parallel safe
as $$
    select queen.txn_hash(p_transaction_id)
           # ('x' || substr(replace(p_partition_id::text, '-', ''), 1, 16))::bit(64)::bigint
$$;

drop function if exists queen.log_txn_add_v1(uuid[], bigint[], bigint[], bigint[], uuid[], bigint[]);
drop function if exists queen.txn_live(bigint[], bigint);

-- The live offsets of a partition whose key is p_key: usually none or one; more only on a hash
-- collision, which the caller resolves against the frames.
drop function if exists queen.log_txn_offsets_v1(uuid, bigint, bigint);

create or replace function queen.log_txn_offsets_v1(p_partition_id uuid, p_key bigint, p_retained bigint)
returns setof bigint
language plpgsql
stable
as $$
#variable_conflict use_column
begin
    return query
    select s.base_offset + e.i - 1
      from queen.log_segments s
     cross join lateral unnest(s.txn_keys) with ordinality as e(k, i)
     where s.partition_id = p_partition_id
       and s.txn_keys @> array[p_key]
       and e.k = p_key
       and s.base_offset + e.i - 1 >= p_retained;
end;
$$;

-- For each (partition, transactionId) pair given, every live message whose key is the same, with
-- the segment that holds it: the broker decodes the frame to tell the message that really carries
-- the transactionId from a hash collision.
drop function if exists queen.log_txn_candidates_v1(uuid[], text[]);

create or replace function queen.log_txn_candidates_v1(p_partition_ids uuid[], p_txn_ids text[])
returns table (idx integer, msg_offset bigint, base_offset bigint, created_at timestamptz, blob bytea)
language plpgsql
-- no JIT: default row estimates over arrays trip it for statements that run in a millisecond
set jit = off
stable
as $$
#variable_conflict use_column
declare
    u          record;
    v_retained bigint;
    v_items    integer[] := '{}';
    v_pids     uuid[] := '{}';
    v_offs     bigint[] := '{}';
begin
    -- the candidate offsets, one partition per statement (on Citus: one worker each)
    for u in
        select t.pid, t.txn, t.i from unnest(p_partition_ids, p_txn_ids) with ordinality as t(pid, txn, i)
         order by t.i
    loop
        select p.retained_from into v_retained from queen.log_partitions p where p.id = u.pid;
        continue when not found;
        select v_items || coalesce(array_agg(u.i::integer order by o.off), '{}'),
               v_pids || coalesce(array_agg(u.pid order by o.off), '{}'),
               v_offs || coalesce(array_agg(o.off order by o.off), '{}')
          into v_items, v_pids, v_offs
          from queen.log_txn_offsets_v1(u.pid, queen.txn_key(u.pid, u.txn), v_retained) as o(off);
    end loop;
    -- and the segments holding them
    return query
    select v_items[s.idx + 1] - 1, v_offs[s.idx + 1], s.base_offset, s.created_at, s.blob
      from queen.segments_at_v1(v_pids, v_offs) as s
     order by s.idx;
end;
$$;

-- Whether a live stored message of these partitions has the key of a new one (p_keys[i] in
-- partition p_partition_ids[i], whose watermark is p_retained[i]) and is not among the known
-- collisions (p_known_*): the dedup check of queen.log_push_v1, which holds the partitions' row
-- locks, so no other push of them is in flight.
create or replace function queen.log_txn_seen_v1(
    p_partition_ids uuid[],
    p_keys bigint[],
    p_retained bigint[],
    p_known_pids uuid[],
    p_known_offsets bigint[])
returns boolean
language plpgsql
-- no JIT: default row estimates over arrays trip it for statements that run in a millisecond
set jit = off
-- plan once per session: these statements take longer to plan than to run
set plan_cache_mode = force_generic_plan
-- key lookups only: a plan made while a table was still small must not scan it once it is large
set enable_seqscan = off
as $$
#variable_conflict use_column
declare
    v_pid  uuid;
    v_keys bigint[];
begin
    -- on Citus one partition per pass, so that Citus routes each statement whole to its worker
    for v_pid in select * from queen.partition_passes(p_partition_ids) loop
        v_keys := case when v_pid is null then p_keys
                       else array(select u.k from unnest(p_partition_ids, p_keys) as u(pid, k)
                                   where u.pid = v_pid) end;
        -- the segments holding any of the keys, found by one scan of the GIN index (joined to
        -- the messages, the partition id became an index condition: a walk of each partition's
        -- segments and a scan of the index for every message); on plain PostgreSQL the partition
        -- filter compares the column with itself, so it cannot be an index condition either
        if exists (
            with hit as materialized (
                select s.partition_id, s.base_offset, s.txn_keys
                  from queen.log_segments s
                 where s.txn_keys && v_keys
                   and s.partition_id = coalesce(v_pid, s.partition_id))
            select 1
              from hit
             cross join lateral unnest(hit.txn_keys) with ordinality as e(k, i)
              join unnest(p_partition_ids, p_keys, p_retained) as u(pid, k, ret)
                on u.pid = hit.partition_id and u.k = e.k
             where hit.base_offset + e.i - 1 >= u.ret
               and not exists (select 1 from unnest(p_known_pids, p_known_offsets) as kn(pid, off)
                                where kn.pid = u.pid and kn.off = hit.base_offset + e.i - 1)) then
            return true;
        end if;
    end loop;
    return false;
end;
$$;
