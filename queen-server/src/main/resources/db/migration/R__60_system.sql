-- Broker-wide state shared through the database.

-- One cheap read for the brokers' periodic refresh: pop maintenance mode and the queues that
-- configured a minimum pop wait.
create or replace function queen.broker_state_v1()
returns table (pop_maintenance boolean, min_pop_wait_queues text[], min_pop_wait_ms integer[])
language plpgsql
stable
as $$
#variable_conflict use_column
begin
    return query
    select coalesce((select (s.value ->> 'enabled')::boolean from queen.system_state s
                      where s.key = 'pop_maintenance'), false),
           coalesce(array_agg(q.name order by q.name), '{}'),
           coalesce(array_agg(q.min_pop_wait_time order by q.name), '{}')
      from queen.queues q
     where q.min_pop_wait_time > 0;
end;
$$;

create or replace function queen.set_pop_maintenance_v1(p_enabled boolean)
returns boolean
language plpgsql
as $$
declare
    v_result boolean;
begin
    insert into queen.system_state (key, value, updated_at)
    values ('pop_maintenance', jsonb_build_object('enabled', p_enabled), now())
    on conflict (key) do update set value = excluded.value, updated_at = excluded.updated_at
    returning (value ->> 'enabled')::boolean
    into v_result;
    return v_result;
end;
$$;

-- broker_state_v1 and, in the same call, the consumer-group resets announced after
-- p_resets_after (see queen.group_resets), oldest first.
create or replace function queen.broker_state_v2(p_resets_after bigint)
returns table (pop_maintenance boolean, min_pop_wait_queues text[], min_pop_wait_ms integer[],
               reset_ids bigint[], reset_queues text[], reset_groups text[])
language plpgsql
stable
as $$
#variable_conflict use_column
begin
    return query
    select s.pop_maintenance, s.min_pop_wait_queues, s.min_pop_wait_ms,
           coalesce(r.ids, '{}'), coalesce(r.queues, '{}'), coalesce(r.groups, '{}')
      from queen.broker_state_v1() s
     cross join (select array_agg(g.id order by g.id) as ids,
                        array_agg(g.queue_name order by g.id) as queues,
                        array_agg(g.consumer_group order by g.id) as groups
                   from queen.group_resets g
                  where g.id > p_resets_after) r;
end;
$$;

-- broker_state_v2, push maintenance mode, the queues whose payloads are sealed at rest
-- (encryption_enabled), which the brokers' push paths follow, and the keys that have sealed
-- payloads, so a broker lacking one refuses the pops that could meet them.
drop function if exists queen.broker_state_v3(bigint);

create function queen.broker_state_v3(p_resets_after bigint)
returns table (pop_maintenance boolean, min_pop_wait_queues text[], min_pop_wait_ms integer[],
               reset_ids bigint[], reset_queues text[], reset_groups text[],
               encrypted_queues text[], push_maintenance boolean, payload_keys integer[])
-- plpgsql, not SQL: on Citus a SQL-language function reads the coordinator's empty shell tables
-- (this one answered no encrypted queues there, so their payloads were stored in the clear)
language plpgsql
stable
as $$
begin
    return query
    select s.*,
           coalesce((select array_agg(q.name order by q.name) from queen.queues q
                      where q.encryption_enabled), '{}'),
           coalesce((select (m.value ->> 'enabled')::boolean from queen.system_state m
                      where m.key = 'push_maintenance'), false),
           coalesce((select array_agg(k.key_id order by k.key_id) from queen.payload_keys k), '{}')
      from queen.broker_state_v2(p_resets_after) s;
end;
$$;

create or replace function queen.set_push_maintenance_v1(p_enabled boolean)
returns boolean
language plpgsql
as $$
declare
    v_result boolean;
begin
    insert into queen.system_state (key, value, updated_at)
    values ('push_maintenance', jsonb_build_object('enabled', p_enabled), now())
    on conflict (key) do update set value = excluded.value, updated_at = excluded.updated_at
    returning (value ->> 'enabled')::boolean
    into v_result;
    return v_result;
end;
$$;
