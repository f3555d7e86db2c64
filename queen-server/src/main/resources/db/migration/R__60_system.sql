-- Broker-wide state shared through the database.

-- One cheap read for the brokers' periodic refresh: pop maintenance mode and the queues that
-- configured a minimum pop wait.
create or replace function queen.broker_state_v1()
returns table (pop_maintenance boolean, min_pop_wait_queues text[], min_pop_wait_ms integer[])
language sql
stable
as $$
    select coalesce((select (s.value ->> 'enabled')::boolean from queen.system_state s
                      where s.key = 'pop_maintenance'), false),
           coalesce(array_agg(q.name order by q.name), '{}'),
           coalesce(array_agg(q.min_pop_wait_time order by q.name), '{}')
      from queen.queues q
     where q.min_pop_wait_time > 0
$$;

create or replace function queen.set_pop_maintenance_v1(p_enabled boolean)
returns boolean
language sql
as $$
    insert into queen.system_state (key, value, updated_at)
    values ('pop_maintenance', jsonb_build_object('enabled', p_enabled), now())
    on conflict (key) do update set value = excluded.value, updated_at = excluded.updated_at
    returning (value ->> 'enabled')::boolean
$$;
