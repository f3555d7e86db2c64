-- A partition's id is derived from its queue's id and its name, so that a lookup by name computes
-- the key instead of searching for it. On Citus the key is the distribution column: a lookup by
-- id goes to the one node that holds the partition, a lookup by name would ask every node, and a
-- unique constraint without the key (queue_id, name) cannot exist at all.
create function queen.partition_uuid(p_queue_id uuid, p_name text)
returns uuid
language sql
immutable
parallel safe
as $$
    select md5(p_queue_id::text || '/' || p_name)::uuid
$$;

-- Existing partitions take their derived ids; every row that names a partition follows. The
-- foreign keys are dropped for the rewrite and recreated exactly as they were.
create temporary table partition_id_map on commit drop as
select p.id as old_id, queen.partition_uuid(p.queue_id, p.name) as new_id
  from queen.log_partitions p
 where p.id <> queen.partition_uuid(p.queue_id, p.name);

create temporary table partition_fks on commit drop as
select c.conrelid::regclass::text as tbl, c.conname::text as name,
       pg_get_constraintdef(c.oid) as def, a.attname::text as col
  from pg_constraint c
  join pg_attribute a on a.attrelid = c.conrelid and a.attnum = c.conkey[1]
 where c.contype = 'f' and c.confrelid = 'queen.log_partitions'::regclass;

do $$
declare
    fk record;
begin
    for fk in select * from partition_fks loop
        execute format('alter table %s drop constraint %I', fk.tbl, fk.name);
        execute format('update %s t set %I = m.new_id from partition_id_map m where t.%I = m.old_id',
                       fk.tbl, fk.col, fk.col);
    end loop;
    update queen.log_partitions p set id = m.new_id from partition_id_map m where p.id = m.old_id;
    for fk in select * from partition_fks loop
        execute format('alter table %s add constraint %I %s', fk.tbl, fk.name, fk.def);
    end loop;
end;
$$;

-- Unique by construction: the id is a function of (queue_id, name).
alter table queen.log_partitions drop constraint log_partitions_queue_id_name_key;
alter table queen.log_partitions alter column id drop default;

-- Traces belong to their partition: the key includes it, so that they can live with the
-- partition's other rows on one node, and the by-name rows point at (partition, trace).
alter table queen.message_trace_names add column partition_id uuid;
update queen.message_trace_names n set partition_id = t.partition_id
  from queen.message_traces t where t.id = n.trace_id;
alter table queen.message_trace_names alter column partition_id set not null;
alter table queen.message_trace_names drop constraint message_trace_names_trace_id_fkey;
alter table queen.message_traces drop constraint message_traces_pkey;
alter table queen.message_traces add primary key (partition_id, id);
alter table queen.message_trace_names drop constraint message_trace_names_pkey;
alter table queen.message_trace_names add primary key (partition_id, trace_name, created_at, trace_id);
drop index queen.message_trace_names_trace;
create index message_trace_names_trace on queen.message_trace_names (partition_id, trace_id);
alter table queen.message_trace_names add foreign key (partition_id, trace_id)
    references queen.message_traces (partition_id, id) on delete cascade;
create index message_trace_names_name on queen.message_trace_names (trace_name, created_at desc);
