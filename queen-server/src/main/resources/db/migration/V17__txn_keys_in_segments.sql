-- The transactionId index moves into the segments. Each segment row keeps the keys of its
-- messages in offset order (queen.txn_key: the transactionId's hash mixed with the partition's
-- id), under a GIN index. The pages of log_txn_index took a 1-2 kB row rewrite for each new
-- message, 40% of a push (docs/benchmarks.md, "The transactionId index in the segments"); the keys
-- now go in with the segment row that a push writes anyway, and the index adds an entry per key.

-- queen.citus_distribute_v1() (V13__citus.sql) distributes a database that got Citus later: without
-- the table dropped below now. First in this script: Citus refuses a function command after a
-- parallel operation on a distributed table in the same transaction.
create or replace function queen.citus_distribute_v1()
returns void
language plpgsql
as $$
declare
    fk  record;
    tbl text;
begin
    if not exists (select 1 from pg_extension where extname = 'citus') then
        raise exception using errcode = 'QN010',
            message = 'the citus extension is not installed in this database';
    end if;
    -- one connection per worker for the whole transaction: distributing tables with foreign keys
    -- to reference tables in one transaction needs it
    set local citus.multi_shard_modify_mode to 'sequential';

    -- Citus refuses to distribute a table that a local table references: drop every foreign key
    -- of the schema, distribute, then create them again exactly as they were.
    create temporary table queen_fks on commit drop as
    select c.conrelid::regclass::text as tbl, c.conname::text as name,
           pg_get_constraintdef(c.oid) as def
      from pg_constraint c
      join pg_namespace n on n.oid = c.connamespace
     where c.contype = 'f' and n.nspname = 'queen';
    for fk in select * from queen_fks loop
        execute format('alter table %s drop constraint %I', fk.tbl, fk.name);
    end loop;

    foreach tbl in array array['queues', 'consumer_groups_metadata', 'log_scan_watermarks',
                               'system_state', 'group_resets', 'payload_keys', 'stream_queries',
                               'queue_stats', 'queue_stats_minutes', 'group_stats'] loop
        perform create_reference_table(format('queen.%I', tbl));
    end loop;

    perform create_distributed_table('queen.log_partitions', 'id');
    foreach tbl in array array['log_segments', 'log_consumers', 'dead_letters',
                               'message_traces', 'message_trace_names', 'stream_state'] loop
        perform create_distributed_table(format('queen.%I', tbl), 'partition_id',
                                         colocate_with => 'queen.log_partitions');
    end loop;

    for fk in select * from queen_fks loop
        execute format('alter table %s add constraint %I %s', fk.tbl, fk.name, fk.def);
    end loop;
end;
$$;

alter table queen.log_segments add column txn_keys bigint[];

-- Carry the pages over: each live (hash, offset) pair into the segment holding the offset, at the
-- offset's position (a message without a pair gets a null key: no lookup finds it, as before). The
-- key is queen.txn_key's: the hash xor the first 64 bits of the partition id. On Citus one
-- statement per partition, which goes whole to the partition's worker.
do $$
declare
    v_pid uuid;
    v_sql text := $q$
        update queen.log_segments s
           set txn_keys = (select array_agg(kp.key order by g.o)
                             from generate_series(0, s.msg_count - 1) as g(o)
                             left join unnest(k.offs, k.keys) as kp(off, key)
                                    on kp.off = s.base_offset + g.o)
          from (select x.partition_id, x.base_offset, array_agg(x.off) as offs,
                       array_agg(x.h # ('x' || substr(replace(x.partition_id::text, '-', ''), 1, 16))
                                         ::bit(64)::bigint) as keys
                  from (select t.partition_id, t.entries[2 * e.i - 1] as h,
                               t.entries[2 * e.i] as off, seg.base_offset
                          from queen.log_txn_index t
                         cross join lateral generate_series(1, cardinality(t.entries) / 2) as e(i)
                         cross join lateral (select ls.base_offset, ls.msg_count
                                               from queen.log_segments ls
                                              where ls.partition_id = t.partition_id
                                                and ls.base_offset <= t.entries[2 * e.i] %3$s
                                              order by ls.base_offset desc
                                              limit 1) seg
                         where t.entries[2 * e.i] < seg.base_offset + seg.msg_count %1$s) x
                 group by x.partition_id, x.base_offset) k
         where s.partition_id = k.partition_id and s.base_offset = k.base_offset %2$s $q$;
begin
    if not exists (select 1 from pg_extension where extname = 'citus') then
        execute format(v_sql, '', '', '');
        return;
    end if;
    for v_pid in select p.id from queen.log_partitions p loop
        -- every table filtered by the id, or Citus does not route the statement
        execute format(v_sql, format('and t.partition_id = %L', v_pid),
                       format('and s.partition_id = %L', v_pid),
                       format('and ls.partition_id = %L', v_pid));
    end loop;
end;
$$;

-- No pending list (fastupdate): every lookup would scan it whole, and a push that finds it full
-- would merge it into the index inside its own transaction.
create index log_segments_txn_keys on queen.log_segments using gin (txn_keys) with (fastupdate = off);

drop table queen.log_txn_index;
