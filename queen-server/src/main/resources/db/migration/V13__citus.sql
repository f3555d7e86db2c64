-- On Citus (the extension installed in this database), the log is distributed by partition: each
-- partition's rows live together on one worker, chosen by the partition id, and every statement
-- of a single-partition push, pop or ack goes to that worker alone. The small tables that every
-- request reads are reference tables, a copy on every node. On plain PostgreSQL this changes
-- nothing; queen.citus_distribute_v1() distributes a database that gets Citus later.
create function queen.citus_distribute_v1()
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
    foreach tbl in array array['log_segments', 'log_txn_index', 'log_consumers', 'dead_letters',
                               'message_traces', 'message_trace_names', 'stream_state'] loop
        perform create_distributed_table(format('queen.%I', tbl), 'partition_id',
                                         colocate_with => 'queen.log_partitions');
    end loop;

    for fk in select * from queen_fks loop
        execute format('alter table %s add constraint %I %s', fk.tbl, fk.name, fk.def);
    end loop;
end;
$$;

do $$
begin
    if exists (select 1 from pg_extension where extname = 'citus') then
        perform queen.citus_distribute_v1();
    end if;
end;
$$;
