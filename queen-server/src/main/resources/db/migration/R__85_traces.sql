-- Traces of messages: record, read per message, read by name, list the names.

create or replace function queen.trace_add_v1(
    p_id uuid, p_partition_id uuid, p_offset bigint, p_transaction_id text, p_group text,
    p_worker text, p_event_type text, p_data jsonb, p_names text[])
returns timestamptz
language plpgsql
as $$
declare
    v_at timestamptz := now();
begin
    insert into queen.message_traces (id, partition_id, msg_offset, transaction_id, consumer_group,
                                      worker_id, event_type, data, trace_names, created_at)
    values (p_id, p_partition_id, p_offset, p_transaction_id, p_group, p_worker, p_event_type,
            p_data, p_names, v_at);
    insert into queen.message_trace_names (partition_id, trace_name, created_at, trace_id)
    select distinct p_partition_id, n, v_at, p_id from unnest(p_names) as n;
    return v_at;
end;
$$;

-- The traces of one message, oldest first.
create or replace function queen.traces_of_v1(p_partition_id uuid, p_offset bigint)
returns table (id uuid, event_type text, data jsonb, consumer_group text, worker_id text,
               created_at timestamptz, trace_names text[])
language plpgsql
stable
as $$
#variable_conflict use_column
begin
    return query
    select t.id, t.event_type, t.data, t.consumer_group, t.worker_id, t.created_at, t.trace_names
      from queen.message_traces t
     where t.partition_id = p_partition_id and t.msg_offset = p_offset
     order by t.created_at, t.id;
end;
$$;

-- One page of the traces carrying a name, newest first, with where their message lives (the
-- caller reads the payloads) and the total count.
create or replace function queen.traces_by_name_v1(p_name text, p_limit integer, p_offset integer)
returns table (id uuid, event_type text, data jsonb, consumer_group text, worker_id text,
               created_at timestamptz, trace_names text[], transaction_id text,
               partition_id uuid, msg_offset bigint, queue_name text, partition_name text,
               total bigint)
language plpgsql
stable
as $$
#variable_conflict use_column
begin
    return query
    select t.id, t.event_type, t.data, t.consumer_group, t.worker_id, t.created_at, t.trace_names,
           t.transaction_id, t.partition_id, t.msg_offset, q.name, p.name,
           (select count(*) from queen.message_trace_names c where c.trace_name = p_name)
      from queen.message_trace_names n
      join queen.message_traces t on t.partition_id = n.partition_id and t.id = n.trace_id
      join queen.log_partitions p on p.id = t.partition_id
      join queen.queues q on q.id = p.queue_id
     where n.trace_name = p_name
     order by n.created_at desc, n.trace_id desc
     limit p_limit offset p_offset;
end;
$$;

-- The names in use, most recently used first, with their trace and message counts.
create or replace function queen.trace_names_v1(p_limit integer, p_offset integer)
returns table (trace_name text, trace_count bigint, message_count bigint, last_seen timestamptz,
               total bigint)
language plpgsql
stable
as $$
#variable_conflict use_column
begin
    return query
    select n.trace_name, count(*), count(distinct (t.partition_id, t.msg_offset)),
           max(n.created_at), count(*) over ()
      from queen.message_trace_names n
      join queen.message_traces t on t.partition_id = n.partition_id and t.id = n.trace_id
     group by n.trace_name
     order by max(n.created_at) desc, n.trace_name
     limit p_limit offset p_offset;
end;
$$;
