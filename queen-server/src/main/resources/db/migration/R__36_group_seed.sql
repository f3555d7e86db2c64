-- The group-first-contact bulk seed: every cursor of a group on a queue in one statement.

drop function if exists queen.log_seed_group_v1(text, text, text, text, text, timestamptz, timestamptz);

-- The group-first-contact bulk seed, for the queue named p_queue or, when it is null, every queue
-- matching p_namespace / p_task. Per queue, one insert into consumer_groups_metadata elects a
-- single seeder (the insert that returns a row; or, when a subscription record already exists,
-- the update that stamps seeded_at), and the seeder seeds every partition's cursor in one
-- set-based statement. Without it, log_pop_v1's per-partition lazy creation convoys: concurrent
-- consumers of a fresh queue each block on another's transaction and the waits form chains that
-- the deadlock detector never breaks. Run it in its own short transaction, before the pop.
-- It never waits either: a queue whose group rows some pop is creating right now (it holds the
-- shared side of the (queue, group) lock) is left for a later call, and so is one another seeder
-- holds. Returns how many queues matched and how many of those are still unseeded.
create or replace function queen.log_seed_group_v1(
    p_queue text,
    p_namespace text,
    p_task text,
    p_group text,
    p_sub_mode text default 'all',
    p_sub_from timestamptz default null,
    p_now timestamptz default null)
returns table (matched integer, pending integer)
language plpgsql
as $$
#variable_conflict use_column
declare
    v_now     timestamptz := coalesce(p_now, now());
    v_mode    text := 'all';
    v_ts      timestamptz;
    v_matched integer := 0;
    v_pending integer := 0;
    v_n       integer;
    v_from    timestamptz;
    v_last    bigint;
    q         record;
    r         record;
begin
    -- queue mode never skips backlog, whatever the pop carries
    if p_group <> '__QUEUE_MODE__' then
        -- mode new carries the time its pop arrived (brokers before it sent none: then now), by
        -- the broker's clock: never later than the database's now (see log_seed_cursor_v1)
        if p_sub_from is not null then
            v_mode := case when p_sub_mode = 'new' then 'new' else 'timestamp' end;
            v_ts := case when p_sub_mode = 'new' then least(p_sub_from, v_now) else p_sub_from end;
        elsif p_sub_mode = 'new' then
            v_mode := 'new';
            v_ts := v_now;
        end if;
    end if;
    for q in
        select qq.id
          from queen.queues qq
         where case when p_queue is not null then qq.name = p_queue
                    else (p_namespace is null or qq.namespace = p_namespace)
                         and (p_task is null or qq.task = p_task) end
         order by qq.id
    loop
        v_matched := v_matched + 1;
        continue when exists (select 1 from queen.consumer_groups_metadata m
                               where m.queue_id = q.id and m.consumer_group = p_group
                                 and m.seeded_at is not null);
        if not pg_try_advisory_xact_lock(hashtextextended(q.id::text || '/' || p_group, 46)) then
            v_pending := v_pending + 1;
            continue;
        end if;
        insert into queen.consumer_groups_metadata
               (queue_id, consumer_group, subscription_mode, subscription_timestamp, seeded_at)
        values (q.id, p_group, v_mode, v_ts, v_now)
        on conflict (queue_id, consumer_group) do nothing;
        get diagnostics v_n = row_count;
        if v_n = 0 then
            update queen.consumer_groups_metadata m set seeded_at = v_now
             where m.queue_id = q.id and m.consumer_group = p_group and m.seeded_at is null;
            get diagnostics v_n = row_count;
        end if;
        continue when v_n = 0;

        -- the seeder: every partition's cursor from the group's durable record (existing cursors
        -- are never re-seeded); queue mode always starts at the beginning
        select m.subscription_timestamp into v_from
          from queen.consumer_groups_metadata m
         where m.queue_id = q.id and m.consumer_group = p_group;
        if p_group = '__QUEUE_MODE__' or v_from is null then
            insert into queen.log_consumers (partition_id, consumer_group, committed)
            select p.id, p_group, -1
              from queen.log_partitions p
             where p.queue_id = q.id
             order by p.id
            on conflict (partition_id, consumer_group) do nothing;
        else
            -- the seek per partition runs here, not inside a statement over the partitions: on
            -- Citus that statement runs on the workers, where the seek's own queries cannot
            -- Each partition read again under a key-share lock: one removed as inactive and pushed
            -- again while the loop ran has the same id and offsets from 0, and a seek bounded by
            -- the loop's old read would skip them. One a removal holds now is gone: skipped, its
            -- first-contact pop seeds it (a clear changes no key: seeded, its pops continue at
            -- retained_from).
            for r in
                select p.id from queen.log_partitions p where p.queue_id = q.id order by p.id
            loop
                select p.last_offset into v_last
                  from queen.log_partitions p
                 where p.id = r.id
                   for key share skip locked;
                continue when not found;
                insert into queen.log_consumers (partition_id, consumer_group, committed)
                values (r.id, p_group, queen.log_seek_v1(r.id, v_from, v_last))
                on conflict (partition_id, consumer_group) do nothing;
            end loop;
        end if;
    end loop;
    return query select v_matched, v_pending;
end;
$$;
