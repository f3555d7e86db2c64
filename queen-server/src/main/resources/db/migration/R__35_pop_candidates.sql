-- Candidate selection around log_pop_v1: the hot-list batch call, the SQL wildcard scan, the
-- discovery pop across queues and the cheap pending probe (the group-first-contact bulk seed they
-- rely on is in R__36_group_seed.sql).

-- The hot-list path: one log_pop_v1 per named candidate, in the given order, in one transaction,
-- until p_partitions partitions were claimed or the batch budget is spent. Returns every row of
-- every candidate tried (its verdict, or its delivered slices) so that the broker can check each
-- verdict back into its ring; candidates after the stop are not returned. An unknown name answers
-- 'missing', with the id the partition would have.
-- the shapes before the byte budget (QUEEN_POP_MAX_BYTES)
drop function if exists queen.log_pop_list_v1(text, text, text[], uuid, integer, integer, boolean,
                                              text, timestamptz, boolean, timestamptz);
drop function if exists queen.log_pop_scan_v1(uuid, text, uuid, integer, integer, boolean, text,
                                              timestamptz, timestamptz);
drop function if exists queen.log_pop_wildcard_v1(text, text, uuid, integer, integer, boolean, text,
                                                  timestamptz, timestamptz);
drop function if exists queen.log_pop_discover_v1(text, text, text, uuid, integer, integer, boolean,
                                                  text, timestamptz, timestamptz);
-- the shapes before p_kept_bytes
drop function if exists queen.log_pop_list_v1(text, text, text[], uuid, integer, integer, boolean,
                                              text, timestamptz, boolean, timestamptz, bigint);
drop function if exists queen.log_pop_scan_v1(uuid, text, uuid, integer, integer, boolean, text,
                                              timestamptz, timestamptz, bigint);
drop function if exists queen.log_pop_wildcard_v1(text, text, uuid, integer, integer, boolean, text,
                                                  timestamptz, timestamptz, bigint);
drop function if exists queen.log_pop_discover_v1(text, text, text, uuid, integer, integer, boolean,
                                                  text, timestamptz, timestamptz, bigint);

create or replace function queen.log_pop_list_v1(
    p_queue text,
    p_group text,
    p_names text[],
    p_worker uuid,
    p_batch integer,
    p_partitions integer,
    p_auto_ack boolean,
    p_sub_mode text default 'all',
    p_sub_from timestamptz default null,
    p_skip_window_debounce boolean default false,
    p_now timestamptz default null,
    p_max_bytes bigint default null,
    p_kept_bytes bigint default null)
returns table (partition_id uuid, partition_name text, queue_name text,
               verdict text, retry_at timestamptz, base_offset bigint, start_idx integer,
               take integer, msg_count integer, created_at timestamptz, blob bytea, attempt integer)
language plpgsql
as $$
#variable_conflict use_column
declare
    v_now     timestamptz := coalesce(p_now, now());
    v_qid     uuid;
    v_pid     uuid;
    v_name    text;
    v_budget  integer := greatest(p_batch, 1);
    v_left    bigint := p_max_bytes;
    v_claimed integer := 0;
    v_taken   integer;
    r         record;
begin
    select q.id into v_qid from queen.queues q where q.name = p_queue;
    if not found then
        -- every name answers 'missing', as an unknown partition does, so that the rings drop them:
        -- with no rows each was given back untried and woken again, and the long-polls of a
        -- deleted queue spun until their timeout
        return query
        select null::uuid, n, p_queue, 'missing'::text, null::timestamptz, null::bigint,
               null::integer, null::integer, null::integer, null::timestamptz, null::bytea,
               null::integer
          from unnest(p_names) as u(n);
        return;
    end if;
    foreach v_name in array p_names loop
        v_pid := queen.partition_uuid(v_qid, v_name);
        v_taken := 0;
        -- log_pop_v1 answers 'missing' itself for a partition that does not exist; its rows are
        -- passed on by return next, not a statement each
        for r in
            select * from queen.log_pop_v1(v_pid, p_group, p_worker, v_budget, p_auto_ack, null,
                                           p_sub_mode, p_sub_from, p_skip_window_debounce, v_now,
                                           v_left, p_kept_bytes)
        loop
            partition_id := v_pid;
            partition_name := v_name;
            queue_name := p_queue;
            verdict := r.verdict;
            retry_at := r.retry_at;
            base_offset := r.base_offset;
            start_idx := r.start_idx;
            take := r.take;
            msg_count := r.msg_count;
            created_at := r.created_at;
            blob := r.blob;
            attempt := r.attempt;
            return next;
            if r.verdict = 'delivered' then
                v_taken := v_taken + r.take;
                v_left := v_left - r.bytes;
            end if;
        end loop;
        if v_taken > 0 then
            v_claimed := v_claimed + 1;
            v_budget := v_budget - v_taken;
        end if;
        exit when v_claimed >= p_partitions or v_budget <= 0 or v_left <= 0;
    end loop;
end;
$$;

-- The empty-scan watermark, after a scan that found nothing to claim. A scan may claim nothing
-- only because others hold the leases, so the watermark is not advanced blindly: at most every
-- 30 s, re-check for pending data ignoring the lease filter, and advance only when the queue is
-- genuinely empty; otherwise record the check and keep the floor, so a lease-held backlog is
-- never stranded. Try, never wait, for the row.
create or replace function queen.log_scan_watermark_check_v1(
    p_queue_id uuid, p_group text, p_watermark timestamptz, p_checked timestamptz,
    p_now timestamptz)
returns void
language plpgsql
as $$
begin
    if (p_checked is not null and p_checked >= p_now - interval '30 seconds')
       or not pg_try_advisory_xact_lock(hashtextextended(p_queue_id::text || '/' || p_group, 45)) then
        return;
    end if;
    perform 1
       from queen.log_partitions p
       left join queen.log_consumers c
         on c.partition_id = p.id and c.consumer_group = p_group
      where p.queue_id = p_queue_id
        and p.last_write_at >= p_watermark - interval '2 minutes'
        and p.last_offset >= 0
        and (c.partition_id is null or p.last_offset > c.committed)
      limit 1;
    insert into queen.log_scan_watermarks as w (queue_id, consumer_group, watermark, checked_at)
    values (p_queue_id, p_group, case when found then p_watermark else p_now end, p_now)
    on conflict (queue_id, consumer_group) do update
       set watermark = excluded.watermark, checked_at = excluded.checked_at;
end;
$$;

-- The SQL candidate scan over one queue (the path the hot-list replaces, still used for first
-- contact and with QUEEN_HOTLIST=0), then one log_pop_v1 per candidate until p_partitions were
-- claimed or the budget is spent. Returns the rows of every candidate tried.
create or replace function queen.log_pop_scan_v1(
    p_queue_id uuid,
    p_group text,
    p_worker uuid,
    p_batch integer,
    p_partitions integer,
    p_auto_ack boolean,
    p_sub_mode text,
    p_sub_from timestamptz,
    p_now timestamptz,
    p_max_bytes bigint,
    p_kept_bytes bigint)
returns table (partition_id uuid, partition_name text,
               verdict text, retry_at timestamptz, base_offset bigint, start_idx integer,
               take integer, msg_count integer, created_at timestamptz, blob bytea, attempt integer,
               bytes bigint)
language plpgsql
as $$
#variable_conflict use_column
declare
    v_now       timestamptz := coalesce(p_now, now());
    v_watermark timestamptz;
    v_checked   timestamptz;
    -- more candidates than wanted: some will be claimed by concurrent pops or turn out empty
    v_cap       integer := case when p_partitions >= 128 then 512
                                else least(greatest(p_partitions * 4, 64), 512) end;
    v_budget    integer := greatest(p_batch, 1);
    v_left      bigint := p_max_bytes;
    v_claimed   integer := 0;
    v_taken     integer;
    cand        record;
    r           record;
begin
    select w.watermark, w.checked_at into v_watermark, v_checked
      from queen.log_scan_watermarks w
     where w.queue_id = p_queue_id and w.consumer_group = p_group;
    v_watermark := coalesce(v_watermark, '-infinity'::timestamptz);

    for cand in
        select p.id, p.name
          from queen.log_partitions p
          left join queen.log_consumers c
            on c.partition_id = p.id and c.consumer_group = p_group
         -- the write watermark keeps a caught-up consumer from scanning every partition on every
         -- long-poll; 2 minutes of slack absorb the 30-second rounding of last_write_at (write_mark)
         where p.queue_id = p_queue_id
           and p.last_write_at >= v_watermark - interval '2 minutes'
           and p.last_offset >= 0
           -- coarse on purpose: log_pop_v1 re-verifies under the row lock
           and (c.partition_id is null or p.last_offset > c.committed)
           and (c.worker_id is null or c.lease_expires_at is null or c.lease_expires_at < v_now)
         -- random order spreads concurrent consumers instead of convoying them on one partition
         order by random()
         limit v_cap
    loop
        v_taken := 0;
        for r in
            select * from queen.log_pop_v1(cand.id, p_group, p_worker, v_budget, p_auto_ack, null,
                                           p_sub_mode, p_sub_from, false, v_now, v_left,
                                           p_kept_bytes)
        loop
            return query select cand.id, cand.name, r.verdict, r.retry_at, r.base_offset,
                                r.start_idx, r.take, r.msg_count, r.created_at, r.blob, r.attempt,
                                r.bytes;
            if r.verdict = 'delivered' then
                v_taken := v_taken + r.take;
                v_left := v_left - r.bytes;
            end if;
        end loop;
        if v_taken > 0 then
            v_claimed := v_claimed + 1;
            v_budget := v_budget - v_taken;
        end if;
        exit when v_claimed >= p_partitions or v_budget <= 0 or v_left <= 0;
    end loop;

    if v_claimed = 0 then
        perform queen.log_scan_watermark_check_v1(p_queue_id, p_group, v_watermark, v_checked, v_now);
    end if;
end;
$$;

-- The wildcard route (GET /pop/queue/:queue) on the SQL path. An unknown queue returns no rows.
create or replace function queen.log_pop_wildcard_v1(
    p_queue text,
    p_group text,
    p_worker uuid,
    p_batch integer,
    p_partitions integer,
    p_auto_ack boolean,
    p_sub_mode text default 'all',
    p_sub_from timestamptz default null,
    p_now timestamptz default null,
    p_max_bytes bigint default null,
    p_kept_bytes bigint default null)
returns table (partition_id uuid, partition_name text, queue_name text,
               verdict text, retry_at timestamptz, base_offset bigint, start_idx integer,
               take integer, msg_count integer, created_at timestamptz, blob bytea, attempt integer)
language plpgsql
as $$
#variable_conflict use_column
declare
    v_qid uuid;
begin
    select q.id into v_qid from queen.queues q where q.name = p_queue;
    if not found then
        return;
    end if;
    return query
    select s.partition_id, s.partition_name, p_queue, s.verdict, s.retry_at, s.base_offset,
           s.start_idx, s.take, s.msg_count, s.created_at, s.blob, s.attempt
      from queen.log_pop_scan_v1(v_qid, p_group, p_worker, p_batch, p_partitions, p_auto_ack,
                                 p_sub_mode, p_sub_from, p_now, p_max_bytes, p_kept_bytes) s;
end;
$$;

-- The discovery route (GET /pop?namespace=&task=): the wildcard scan over every queue whose
-- namespace and/or task match, in random order, one budget and one partition count for all.
-- A null filter matches anything; the caller refuses a pop with neither.
create or replace function queen.log_pop_discover_v1(
    p_namespace text,
    p_task text,
    p_group text,
    p_worker uuid,
    p_batch integer,
    p_partitions integer,
    p_auto_ack boolean,
    p_sub_mode text default 'all',
    p_sub_from timestamptz default null,
    p_now timestamptz default null,
    p_max_bytes bigint default null,
    p_kept_bytes bigint default null)
returns table (partition_id uuid, partition_name text, queue_name text,
               verdict text, retry_at timestamptz, base_offset bigint, start_idx integer,
               take integer, msg_count integer, created_at timestamptz, blob bytea, attempt integer)
language plpgsql
as $$
#variable_conflict use_column
declare
    v_budget  integer := greatest(p_batch, 1);
    v_left    bigint := p_max_bytes;
    v_claimed integer := 0;
    v_pid     uuid;
    q         record;
    r         record;
begin
    for q in
        select qq.id, qq.name
          from queen.queues qq
         where (p_namespace is null or qq.namespace = p_namespace)
           and (p_task is null or qq.task = p_task)
         order by random()
    loop
        v_pid := null;
        for r in
            select * from queen.log_pop_scan_v1(q.id, p_group, p_worker, v_budget,
                                                p_partitions - v_claimed, p_auto_ack,
                                                p_sub_mode, p_sub_from, p_now, v_left,
                                                p_kept_bytes)
        loop
            return query select r.partition_id, r.partition_name, q.name, r.verdict, r.retry_at,
                                r.base_offset, r.start_idx, r.take, r.msg_count, r.created_at,
                                r.blob, r.attempt;
            if r.verdict = 'delivered' then
                v_budget := v_budget - r.take;
                v_left := v_left - r.bytes;
                if v_pid is distinct from r.partition_id then
                    v_claimed := v_claimed + 1;
                    v_pid := r.partition_id;
                end if;
            end if;
        end loop;
        exit when v_claimed >= p_partitions or v_budget <= 0 or v_left <= 0;
    end loop;
end;
$$;

-- The cheap probe: false means definitively nothing this group can take from the queue right
-- now, so a long-poll on the SQL path parks without scanning.
create or replace function queen.log_has_pending_v1(
    p_queue text, p_group text, p_now timestamptz default null)
returns boolean
language plpgsql
stable
as $$
begin
    return (
    select exists (
        select 1
          from queen.queues q
          join queen.log_partitions p on p.queue_id = q.id
          left join queen.log_scan_watermarks w
            on w.queue_id = q.id and w.consumer_group = p_group
          left join queen.log_consumers c
            on c.partition_id = p.id and c.consumer_group = p_group
         where q.name = p_queue
           and p.last_write_at >= coalesce(w.watermark, '-infinity'::timestamptz) - interval '2 minutes'
           and p.last_offset >= 0
           and (c.partition_id is null or p.last_offset > c.committed)
           and (c.worker_id is null or c.lease_expires_at is null
                or c.lease_expires_at < coalesce(p_now, now()))));
end;
$$;

-- The hot-list reseed: names of partitions of the queue that may have messages the group can
-- take now (the wildcard scan's filter, without claiming anything), at most p_limit of them in
-- random order. Uses and maintains the empty-scan watermark like the scan does, so a caught-up
-- group does not walk every partition of a large queue on each reseed.
create or replace function queen.log_pop_candidates_v1(
    p_queue text, p_group text, p_limit integer, p_now timestamptz default null)
returns table (partition_name text)
language plpgsql
as $$
#variable_conflict use_column
declare
    v_now       timestamptz := coalesce(p_now, now());
    v_qid       uuid;
    v_watermark timestamptz;
    v_checked   timestamptz;
begin
    select q.id into v_qid from queen.queues q where q.name = p_queue;
    if not found then
        return;
    end if;
    select w.watermark, w.checked_at into v_watermark, v_checked
      from queen.log_scan_watermarks w
     where w.queue_id = v_qid and w.consumer_group = p_group;
    v_watermark := coalesce(v_watermark, '-infinity'::timestamptz);

    return query
    select p.name
      from queen.log_partitions p
      left join queen.log_consumers c
        on c.partition_id = p.id and c.consumer_group = p_group
     where p.queue_id = v_qid
       and p.last_write_at >= v_watermark - interval '2 minutes'
       and p.last_offset >= 0
       and (c.partition_id is null or p.last_offset > c.committed)
       and (c.worker_id is null or c.lease_expires_at is null or c.lease_expires_at < v_now)
     order by random()
     limit p_limit;
    if found then
        return;
    end if;

    perform queen.log_scan_watermark_check_v1(v_qid, p_group, v_watermark, v_checked, v_now);
end;
$$;
