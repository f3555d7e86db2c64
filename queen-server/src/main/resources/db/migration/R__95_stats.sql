-- Statistics: per-minute counters added by every broker, and the per-queue snapshot one broker
-- refreshes. Readers (status, resources, analytics) read these small tables only.

-- Claims a cluster-wide periodic job named p_key: true for at most one caller per interval.
create or replace function queen.periodic_claim_v1(p_key text, p_interval_ms integer,
                                                   p_now timestamptz default null)
returns boolean
language plpgsql
as $$
declare
    v_at     timestamptz := coalesce(p_now, now());
    -- computed before the statement: Citus takes only immutable expressions in ON CONFLICT
    v_before timestamptz := coalesce(p_now, now()) - make_interval(secs => p_interval_ms * 0.9 / 1000.0);
    v_result boolean;
begin
    insert into queen.system_state as s (key, value, updated_at)
    values (p_key, '{}'::jsonb, v_at)
    on conflict (key) do update set updated_at = excluded.updated_at
     where s.updated_at <= v_before
    returning true
    into v_result;
    return v_result;
end;
$$;

-- Adds one broker's counts to the current minute of each queue (unknown queue names are skipped).
create or replace function queen.stats_add_v1(
    p_queues text[], p_pushed bigint[], p_popped bigint[], p_acked bigint[], p_failed bigint[],
    p_dead bigint[], p_now timestamptz default null)
returns void
language plpgsql
as $$
begin
    insert into queen.queue_stats_minutes as m
           (queue_id, minute, pushed, popped, acked, failed, dead_lettered)
    select q.id, date_trunc('minute', coalesce(p_now, now())), u.pu, u.po, u.ac, u.fa, u.de
      from unnest(p_queues, p_pushed, p_popped, p_acked, p_failed, p_dead)
           as u(name, pu, po, ac, fa, de)
      join queen.queues q on q.name = u.name
     order by q.id
    on conflict (queue_id, minute) do update
       set pushed = m.pushed + excluded.pushed, popped = m.popped + excluded.popped,
           acked = m.acked + excluded.acked, failed = m.failed + excluded.failed,
           dead_lettered = m.dead_lettered + excluded.dead_lettered;
end;
$$;

-- Recomputes every queue's snapshot and records its lag in the current minute. A partition's
-- counts follow its queue-mode cursor, or the slowest group's when it is read only by groups.
-- One pass over partitions and cursors, plus one primary-key probe per lagging partition.
-- One refresh at a time, before any row (a tick that refreshes takes the same lock first): a
-- refresh asked for through the route and a tick's deadlocked on the snapshot and minute rows,
-- and an older snapshot could land after a newer one.
create or replace function queen.stats_refresh_v1(p_now timestamptz default null)
returns integer
language plpgsql
as $$
declare
    v_now timestamptz := coalesce(p_now, now());
    v_n   integer;
begin
    perform pg_advisory_xact_lock(hashtext('queen.stats_refresh'));
    with per_partition as (
        select p.queue_id, p.id, p.last_offset, p.retained_from,
               coalesce(qm.committed, slow.committed, -1) as committed,
               -- the lease of the cursor that counts: queue mode's, else the slowest group's (a
               -- queue read by groups alone showed nothing in processing)
               case when qm.partition_id is not null
                    then case when qm.lease_expires_at > v_now and qm.worker_id is not null
                              then greatest(qm.batch_end - qm.committed, 0) else 0 end
                    when slow.lease_expires_at > v_now and slow.worker_id is not null
                    then greatest(slow.batch_end - slow.committed, 0) else 0 end as leased,
               leases.n as leases, oldest.created_at as oldest
          from queen.log_partitions p
          left join queen.log_consumers qm
                 on qm.partition_id = p.id and qm.consumer_group = '__QUEUE_MODE__'
          left join lateral (select c.committed, c.batch_end, c.lease_expires_at, c.worker_id
                               from queen.log_consumers c
                              where c.partition_id = p.id
                              order by c.committed
                              limit 1) slow on true
          left join lateral (select count(*) as n from queen.log_consumers c
                              where c.partition_id = p.id and c.worker_id is not null
                                and c.lease_expires_at > v_now) leases on true
          -- the segment holding the queue-mode cursor's next message: its age is the lag
          left join lateral (select s.created_at
                               from queen.log_segments s
                              where s.partition_id = p.id
                                and s.base_offset <= greatest(coalesce(qm.committed, slow.committed, -1) + 1,
                                                              p.retained_from)
                              order by s.base_offset desc
                              limit 1) oldest
                 on p.last_offset > coalesce(qm.committed, slow.committed, -1)),
    lagging as (
        select pp.queue_id, pp.last_offset - greatest(pp.committed, pp.retained_from - 1) as lag,
               pp.oldest
          from per_partition pp
         where pp.last_offset > pp.committed),
    per_queue as (
        select q.id as queue_id,
               count(pp.id) as partitions,
               coalesce(sum(pp.last_offset + 1 - pp.retained_from), 0) as total,
               coalesce(sum(greatest(pp.committed + 1 - pp.retained_from, 0)), 0) as completed,
               coalesce(sum(pp.leased), 0) as processing,
               coalesce(sum(pp.leases), 0) as leases
          from queen.queues q
          left join per_partition pp on pp.queue_id = q.id
         group by q.id),
    lag as (
        select l.queue_id, sum(l.lag) as messages, min(l.oldest) as oldest
          from lagging l group by l.queue_id),
    dead as (
        select p.queue_id, count(*) as n
          from queen.dead_letters d join queen.log_partitions p on p.id = d.partition_id
         group by p.queue_id),
    snap as (
        insert into queen.queue_stats as s
               (queue_id, partitions, total, pending, processing, completed, dead_letter,
                active_leases, lag_messages, max_lag_seconds, oldest_pending_at, updated_at)
        select pq.queue_id, pq.partitions, pq.total,
               greatest(pq.total - pq.completed - pq.processing, 0), pq.processing, pq.completed,
               coalesce(d.n, 0), pq.leases, coalesce(l.messages, 0),
               coalesce(extract(epoch from v_now - l.oldest)::bigint, 0), l.oldest, v_now
          from per_queue pq
          left join lag l on l.queue_id = pq.queue_id
          left join dead d on d.queue_id = pq.queue_id
        on conflict (queue_id) do update
           set partitions = excluded.partitions, total = excluded.total,
               pending = excluded.pending, processing = excluded.processing,
               completed = excluded.completed, dead_letter = excluded.dead_letter,
               active_leases = excluded.active_leases, lag_messages = excluded.lag_messages,
               max_lag_seconds = excluded.max_lag_seconds,
               oldest_pending_at = excluded.oldest_pending_at, updated_at = excluded.updated_at
        returning s.queue_id, s.lag_messages, s.max_lag_seconds)
    -- a minute gets a row for its lag only when there is lag (a row of its counts, written by
    -- the ticks, gets the lag whatever it is): a row per queue and minute for a week, idle
    -- queues' included, was 1.5 MB a queue
    insert into queen.queue_stats_minutes as m (queue_id, minute, lag_messages, max_lag_seconds)
    select sn.queue_id, date_trunc('minute', v_now), sn.lag_messages, sn.max_lag_seconds from snap sn
     where sn.lag_messages > 0 or sn.max_lag_seconds > 0
        or exists (select 1 from queen.queue_stats_minutes x
                    where x.queue_id = sn.queue_id and x.minute = date_trunc('minute', v_now))
     -- in queue id order, as the ticks add their counts: in any order, two deadlocked
     order by sn.queue_id
    on conflict (queue_id, minute) do update
       set lag_messages = excluded.lag_messages, max_lag_seconds = excluded.max_lag_seconds;
    select count(*) into v_n from queen.queue_stats s where s.updated_at = v_now;
    -- every group's oldest uncommitted message, one probe per lagging cursor
    insert into queen.group_stats as g (queue_id, consumer_group, oldest_unconsumed_at, updated_at)
    select l.queue_id, l.consumer_group, min(l.oldest_unconsumed_at), v_now
      from queen.cursor_lag l
     group by l.queue_id, l.consumer_group
    on conflict (queue_id, consumer_group) do update
       set oldest_unconsumed_at = excluded.oldest_unconsumed_at, updated_at = excluded.updated_at;
    delete from queen.group_stats g where g.updated_at < v_now;
    -- a week of minutes is kept
    delete from queen.queue_stats_minutes m where m.minute < v_now - interval '7 days';
    return v_n;
end;
$$;

-- Buckets of the per-minute rows between p_from and p_to, for the named queue or every queue
-- matching p_namespace / p_task (nulls: all). Lag is the queues' summed lag of a minute, the
-- largest of the bucket's minutes (the largest single queue's was the backlog of several queues).
create or replace function queen.stats_series_v1(
    p_queue text, p_namespace text, p_task text, p_from timestamptz, p_to timestamptz,
    p_bucket_minutes integer)
returns table (bucket timestamptz, pushed bigint, popped bigint, acked bigint, failed bigint,
               dead_lettered bigint, lag_messages bigint, max_lag_seconds bigint)
language plpgsql
stable
as $$
#variable_conflict use_column
begin
    return query
    select to_timestamp(floor(extract(epoch from mm.minute) / (p_bucket_minutes::bigint * 60))
                        * p_bucket_minutes::bigint * 60),
           sum(mm.pushed)::bigint, sum(mm.popped)::bigint, sum(mm.acked)::bigint,
           sum(mm.failed)::bigint, sum(mm.dead_lettered)::bigint,
           max(mm.lag_messages)::bigint, max(mm.max_lag_seconds)::bigint
      from (select m.minute, sum(m.pushed) as pushed, sum(m.popped) as popped,
                   sum(m.acked) as acked, sum(m.failed) as failed,
                   sum(m.dead_lettered) as dead_lettered, sum(m.lag_messages) as lag_messages,
                   max(m.max_lag_seconds) as max_lag_seconds
              from queen.queue_stats_minutes m
              join queen.queues q on q.id = m.queue_id
             where m.minute >= p_from and m.minute <= p_to
               and (p_queue is null or q.name = p_queue)
               and (p_namespace is null or q.namespace = p_namespace)
               and (p_task is null or q.task = p_task)
             group by m.minute) mm
     group by 1
     order by 1;
end;
$$;

-- The snapshot of every queue, with its name and grouping, newest queue first.
create or replace function queen.stats_queues_v1()
returns table (queue_id uuid, name text, namespace text, task text, priority integer,
               created_at timestamptz, partitions bigint, total bigint, pending bigint,
               processing bigint, completed bigint, dead_letter bigint, active_leases bigint,
               lag_messages bigint, max_lag_seconds bigint, oldest_pending_at timestamptz,
               updated_at timestamptz)
language plpgsql
stable
as $$
#variable_conflict use_column
begin
    return query
    select q.id, q.name, q.namespace, q.task, q.priority, q.created_at,
           coalesce(s.partitions, 0), coalesce(s.total, 0), coalesce(s.pending, 0),
           coalesce(s.processing, 0), coalesce(s.completed, 0), coalesce(s.dead_letter, 0),
           coalesce(s.active_leases, 0), coalesce(s.lag_messages, 0),
           coalesce(s.max_lag_seconds, 0), s.oldest_pending_at, s.updated_at
      from queen.queues q
      left join queen.queue_stats s on s.queue_id = q.id
     order by q.created_at desc, q.name;
end;
$$;

-- One page of a queue's partitions by name with their counts, live: the queue-mode cursor (or the
-- slowest group's) decides completed, pending and processing, as in the snapshot; partition_count
-- is how many the queue has. The per-partition probes (the oldest retained message, the dead
-- letters, the slowest cursor) run for the page only: 10,000 partitions cost a page, not 40,000
-- probes. The page is chosen first, into an array: Citus plans no lateral join next to a CTE.
drop function if exists queen.queue_partitions_v1(uuid);

create or replace function queen.queue_partitions_v2(p_queue_id uuid, p_limit integer,
                                                     p_offset integer)
returns table (id uuid, name text, created_at timestamptz, total bigint, pending bigint,
               processing bigint, completed bigint, dead_letter bigint, total_consumed bigint,
               last_activity timestamptz, oldest_message timestamptz,
               newest_message timestamptz, last_offset bigint, partition_count bigint)
language plpgsql
stable
as $$
#variable_conflict use_column
declare
    -- a variable, not now() in the lateral below: Citus takes only immutable functions there
    v_now   timestamptz := now();
    v_ids   uuid[];
    v_count bigint;
begin
    select count(*) into v_count from queen.log_partitions p where p.queue_id = p_queue_id;
    -- walked in name order on log_partitions_by_name, stopping at the page's end
    select coalesce(array_agg(x.id), '{}') into v_ids
      from (select p.id
              from queen.log_partitions p
             where p.queue_id = p_queue_id
             order by p.name
             limit p_limit offset p_offset) x;
    return query
    select p.id, p.name, p.created_at, t.total,
           greatest(t.total - t.completed - t.leased, 0), t.leased, t.completed,
           (select count(*) from queen.dead_letters d where d.partition_id = p.id),
           coalesce(qm.total_consumed, 0), p.last_write_at,
           (select s.created_at from queen.log_segments s
             where s.partition_id = p.id and s.base_offset >= p.retained_from
             order by s.base_offset limit 1),
           p.newest_created_at, p.last_offset, v_count
      from queen.log_partitions p
      left join queen.log_consumers qm
             on qm.partition_id = p.id and qm.consumer_group = '__QUEUE_MODE__'
      left join lateral (select c.committed, c.batch_end, c.lease_expires_at, c.worker_id
                           from queen.log_consumers c
                          where c.partition_id = p.id
                          order by c.committed
                          limit 1) slow on true
     cross join lateral (
         select p.last_offset + 1 - p.retained_from as total,
                greatest(coalesce(qm.committed, slow.committed, -1) + 1 - p.retained_from, 0)
                    as completed,
                -- as the snapshot counts it: queue mode's lease, else the slowest group's
                case when qm.partition_id is not null
                     then case when qm.lease_expires_at > v_now and qm.worker_id is not null
                               then greatest(qm.batch_end - qm.committed, 0) else 0 end
                     when slow.lease_expires_at > v_now and slow.worker_id is not null
                     then greatest(slow.batch_end - slow.committed, 0) else 0 end as leased) t
     where p.queue_id = p_queue_id and p.id = any (v_ids)
     order by p.name;
end;
$$;

-- Partitions of every queue (or one), most recently written first.
create or replace function queen.partitions_list_v1(p_queue text, p_limit integer, p_offset integer)
returns table (id uuid, name text, queue_name text, created_at timestamptz, last_offset bigint,
               retained bigint, last_activity timestamptz, total bigint)
language plpgsql
stable
as $$
#variable_conflict use_column
begin
    return query
    select p.id, p.name, q.name, p.created_at, p.last_offset, p.last_offset + 1 - p.retained_from,
           p.last_write_at, count(*) over ()
      from queen.log_partitions p
      join queen.queues q on q.id = p.queue_id
     where p_queue is null or q.name = p_queue
     order by p.last_write_at desc, p.id
     limit p_limit offset p_offset;
end;
$$;

-- The dead letters of the named queues (null: of every queue): how many partitions hold some, and
-- the most frequent errors among the newest 1,000. Their count comes from the snapshot
-- (queue_stats.dead_letter): counting the table at every dashboard refresh read all of it.
create or replace function queen.dead_letter_summary_v2(p_queues text[])
returns table (partitions bigint, error_message text, error_count bigint)
language plpgsql
stable
as $$
#variable_conflict use_column
begin
    return query
    with matching as (
        select p.id from queen.log_partitions p join queen.queues q on q.id = p.queue_id
         where p_queues is null or q.name = any (p_queues)),
    counts as (
        select count(distinct d.partition_id) as partitions
          from queen.dead_letters d
         where p_queues is null or d.partition_id in (select m.id from matching m)),
    recent as (
        select d.error_message from queen.dead_letters d
         where p_queues is null or d.partition_id in (select m.id from matching m)
         order by d.failed_at desc limit 1000),
    errors as (
        select coalesce(r.error_message, '') as error_message, count(*) as n
          from recent r group by 1 order by 2 desc limit 5)
    select c.partitions, e.error_message, e.n
      from counts c left join errors e on true;
end;
$$;

-- Brokers of the builds before v2, during a rolling upgrade: every queue's, and the table counted.
create or replace function queen.dead_letter_summary_v1()
returns table (total bigint, partitions bigint, error_message text, error_count bigint)
language sql
stable
as $$
    select (select count(*) from queen.dead_letters), s.partitions, s.error_message, s.error_count
      from queen.dead_letter_summary_v2(null) s;
$$;

-- One broker's statistics tick in one call: its counts added to the current minute, then the
-- snapshot refreshed if this broker claims it for the interval. Returns the queues refreshed, or
-- -1 when another broker had the turn.
create or replace function queen.stats_tick_v1(
    p_queues text[], p_pushed bigint[], p_popped bigint[], p_acked bigint[], p_failed bigint[],
    p_dead bigint[], p_interval_ms integer)
returns integer
language plpgsql
as $$
begin
    if cardinality(p_queues) > 0 then
        perform queen.stats_add_v1(p_queues, p_pushed, p_popped, p_acked, p_failed, p_dead);
    end if;
    if not coalesce(queen.periodic_claim_v1('stats_refresh', p_interval_ms), false) then
        return -1;
    end if;
    return queen.stats_refresh_v1();
end;
$$;
