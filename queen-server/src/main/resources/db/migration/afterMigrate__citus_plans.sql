-- Whether the log is distributed, pinned again: a database that got Citus since the last start
-- was distributed by hand (docs/operations.md, Running on Citus).
select queen.pin_distributed();

-- On Citus, the functions that keep one generic plan per session on plain PostgreSQL
-- (plan_cache_mode = force_generic_plan) plan each call instead: Citus routes a statement to the
-- worker of its partition by the partition id's value, which a generic plan does not know (it
-- would refuse the statement). Runs after every migration, because a repeatable migration that
-- replaces such a function brings its setting back.
do $$
declare
    f record;
begin
    if not exists (select 1 from pg_extension where extname = 'citus') then
        return;
    end if;
    for f in
        select p.oid::regprocedure as signature
          from pg_proc p
         where p.pronamespace = 'queen'::regnamespace
           and 'plan_cache_mode=force_generic_plan' = any (p.proconfig)
    loop
        execute format('alter function %s set plan_cache_mode = force_custom_plan', f.signature);
    end loop;
end;
$$;
