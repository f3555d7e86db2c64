-- Analytics: the statistics tick with retention counts and this broker's sample, and the readers
-- of the per-minute rows by queue and by broker.

-- Adds one broker's counts to the current minute of each queue (unknown queue names are skipped).
create or replace function queen.stats_add_v2(
    p_queues text[], p_pushed bigint[], p_popped bigint[], p_acked bigint[], p_failed bigint[],
    p_dead bigint[], p_retained bigint[], p_now timestamptz default null)
returns void
language plpgsql
as $$
begin
    insert into queen.queue_stats_minutes as m
           (queue_id, minute, pushed, popped, acked, failed, dead_lettered, retention_deleted)
    select q.id, date_trunc('minute', coalesce(p_now, now())), u.pu, u.po, u.ac, u.fa, u.de, u.re
      from unnest(p_queues, p_pushed, p_popped, p_acked, p_failed, p_dead, p_retained)
           as u(name, pu, po, ac, fa, de, re)
      join queen.queues q on q.name = u.name
     order by q.id
    on conflict (queue_id, minute) do update
       set pushed = m.pushed + excluded.pushed, popped = m.popped + excluded.popped,
           acked = m.acked + excluded.acked, failed = m.failed + excluded.failed,
           dead_lettered = m.dead_lettered + excluded.dead_lettered,
           retention_deleted = m.retention_deleted + excluded.retention_deleted;
end;
$$;

-- This broker's row of the current minute: gauges from the latest sample, counts added up.
create or replace function queen.broker_sample_v1(p jsonb, p_now timestamptz default null)
returns void
language plpgsql
as $$
begin
    insert into queen.broker_stats_minutes as b
           (broker_id, minute, hostname, started_at, rss_bytes, heap_used_bytes,
            heap_committed_bytes, cpu_percent, threads, db_pool_active, db_pool_idle,
            db_pool_waiting, pushed, popped, acked, parked)
    values (p->>'brokerId', date_trunc('minute', coalesce(p_now, now())), p->>'hostname',
            (p->>'startedAt')::timestamptz, (p->>'rssBytes')::bigint,
            (p->>'heapUsedBytes')::bigint, (p->>'heapCommittedBytes')::bigint,
            (p->>'cpuPercent')::double precision, (p->>'threads')::integer,
            (p->>'dbPoolActive')::integer, (p->>'dbPoolIdle')::integer,
            (p->>'dbPoolWaiting')::integer, (p->>'pushed')::bigint, (p->>'popped')::bigint,
            (p->>'acked')::bigint, coalesce(p->'parked', '{}'))
    on conflict (broker_id, minute) do update
       set hostname = excluded.hostname, started_at = excluded.started_at,
           rss_bytes = excluded.rss_bytes, heap_used_bytes = excluded.heap_used_bytes,
           heap_committed_bytes = excluded.heap_committed_bytes,
           cpu_percent = excluded.cpu_percent, threads = excluded.threads,
           db_pool_active = excluded.db_pool_active, db_pool_idle = excluded.db_pool_idle,
           db_pool_waiting = excluded.db_pool_waiting, pushed = b.pushed + excluded.pushed,
           popped = b.popped + excluded.popped, acked = b.acked + excluded.acked,
           parked = excluded.parked;
end;
$$;

-- One statistics tick of one broker: its counts, its sample, and the snapshot refresh when it is
-- this broker's turn (which also drops broker rows older than seven days). -1: not its turn.
create or replace function queen.stats_tick_v2(
    p_queues text[], p_pushed bigint[], p_popped bigint[], p_acked bigint[], p_failed bigint[],
    p_dead bigint[], p_retained bigint[], p_sample jsonb, p_interval_ms integer)
returns integer
language plpgsql
as $$
declare
    v_took    integer;
    v_started timestamptz;
    v_n       integer;
    v_claimed boolean;
begin
    -- a refresh reads every partition and cursor: one that takes long (3 s at 200,000
    -- partitions, every 5 s was 60% of a core) runs about a tenth of the time, and at least
    -- every 10 minutes (one refresh slowed by a lock must not freeze the counts for long)
    select (s.value ->> 'tookMs')::integer into v_took
      from queen.system_state s where s.key = 'stats_refresh';
    -- the claim (it locks its row, claimed or not) and the refresh's lock before the counts' rows:
    -- with the counts first, a tick that then claimed deadlocked with another broker's refresh or
    -- with one asked for through the route, each holding rows the other needed
    v_claimed := coalesce(queen.periodic_claim_v1(
                              'stats_refresh',
                              greatest(p_interval_ms, least(10 * coalesce(v_took, 0), 600000))),
                          false);
    if v_claimed then
        perform pg_advisory_xact_lock(hashtext('queen.stats_refresh'));
    end if;
    if cardinality(p_queues) > 0 then
        perform queen.stats_add_v2(p_queues, p_pushed, p_popped, p_acked, p_failed, p_dead,
                                   p_retained);
    end if;
    if p_sample is not null then
        perform queen.broker_sample_v1(p_sample);
    end if;
    if not v_claimed then
        return -1;
    end if;
    delete from queen.broker_stats_minutes b where b.minute < now() - interval '7 days';
    v_started := clock_timestamp();
    -- in a block of its own: a refresh that fails (a statement_timeout shorter than it, say) took
    -- the tick's counts down with it, tick after tick; its time still backs the next claims off
    begin
        v_n := queen.stats_refresh_v1();
    exception when query_canceled or others then
        raise warning 'queen statistics snapshot refresh failed: %', sqlerrm;
        v_n := -2;
    end;
    -- computed before the statement: Citus takes no volatile function in an UPDATE
    v_took := (extract(epoch from clock_timestamp() - v_started) * 1000)::integer;
    update queen.system_state s
       set value = jsonb_build_object('tookMs', v_took)
     where s.key = 'stats_refresh';
    return v_n;
end;
$$;

-- The per-minute rows of one queue or of all, oldest first.
create or replace function queen.analytics_queue_minutes_v1(p_queue text, p_from timestamptz,
                                                            p_to timestamptz)
returns table (queue text, minute timestamptz, pushed bigint, popped bigint, acked bigint,
               failed bigint, dead_lettered bigint, retention_deleted bigint,
               lag_messages bigint, max_lag_seconds bigint)
language plpgsql
as $$
begin
    return query
    select q.name, m.minute, m.pushed, m.popped, m.acked, m.failed, m.dead_lettered,
           m.retention_deleted, m.lag_messages, m.max_lag_seconds
      from queen.queue_stats_minutes m
      join queen.queues q on q.id = m.queue_id
     where m.minute >= date_trunc('minute', p_from) and m.minute <= p_to
       and (p_queue is null or q.name = p_queue)
     order by q.name, m.minute;
end;
$$;

-- The per-minute rows of one broker, of the brokers of one host, or of all, oldest first.
create or replace function queen.analytics_broker_minutes_v1(p_broker text, p_hostname text,
                                                             p_from timestamptz, p_to timestamptz)
returns table (broker_id text, minute timestamptz, hostname text, started_at timestamptz,
               rss_bytes bigint, heap_used_bytes bigint, heap_committed_bytes bigint,
               cpu_percent double precision, threads integer, db_pool_active integer,
               db_pool_idle integer, db_pool_waiting integer, pushed bigint, popped bigint,
               acked bigint, parked jsonb)
language plpgsql
as $$
begin
    -- the columns are named, not the table's row type: repeatable scripts also run against a
    -- database migrated only part of the way (an older build's, in MigrationTest)
    return query
    select b.broker_id, b.minute, b.hostname, b.started_at, b.rss_bytes, b.heap_used_bytes,
           b.heap_committed_bytes, b.cpu_percent, b.threads, b.db_pool_active, b.db_pool_idle,
           b.db_pool_waiting, b.pushed, b.popped, b.acked, b.parked
      from queen.broker_stats_minutes b
     where b.minute >= date_trunc('minute', p_from) and b.minute <= p_to
       and (p_broker is null or b.broker_id = p_broker)
       and (p_hostname is null or b.hostname = p_hostname)
     order by b.broker_id, b.minute;
end;
$$;
