-- Retention: whole segments deleted oldest first, in short bounded batches, with the watermark
-- (log_partitions.retained_from) that the transactionId index and the forward walks rely on.

-- Claims the cluster-wide retention cycle: true for at most one broker per interval, however many
-- run. The claim is the row's timestamp; 10% slack absorbs timer jitter.
create or replace function queen.retention_claim_v1(p_interval_ms integer, p_now timestamptz default null)
returns boolean
language plpgsql
as $$
begin
    return queen.periodic_claim_v1('retention', p_interval_ms, p_now);
end;
$$;

-- Queues whose retention is on and set.
create or replace function queen.retention_queues_v1()
returns table (queue_id uuid, queue_name text, retention_seconds integer,
               completed_retention_seconds integer)
language plpgsql
stable
as $$
#variable_conflict use_column
begin
    return query
    select q.id, q.name, q.retention_seconds, q.completed_retention_seconds
      from queen.queues q
     where q.retention_enabled
       and (q.retention_seconds > 0 or q.completed_retention_seconds > 0)
     order by q.name;
end;
$$;

-- Partitions of a queue whose oldest retained segment was created before p_cutoff: one
-- primary-key probe each, from the watermark.
create or replace function queen.retention_candidates_v1(p_queue_id uuid, p_cutoff timestamptz)
returns setof uuid
language plpgsql
stable
as $$
#variable_conflict use_column
begin
    return query
    select p.id
      from queen.log_partitions p
     cross join lateral (select s.created_at from queen.log_segments s
                          where s.partition_id = p.id and s.base_offset >= p.retained_from
                          order by s.base_offset
                          limit 1) f
     where p.queue_id = p_queue_id and f.created_at < p_cutoff
     order by p.id;
end;
$$;

-- One bounded batch of one partition: deletes at most p_max_segments of its oldest segments that
-- are expired, and moves the watermark past them. Expired: created before p_time_cutoff
-- (retentionSeconds), or created before p_completed_cutoff (completedRetentionSeconds) and
-- committed by every group that reads the partition: each cursor on it (queue mode included), and
-- each group subscribed to the queue without a cursor here yet, which holds what its subscription
-- would deliver. A partition nobody reads has nothing completed. created_at is monotone in
-- base_offset, so both rules select a prefix.
--
-- Two retention workers never take one partition at once (a try-lock: the second skips it); the
-- partition row lock makes the partition's pushes wait for this one batch at most. Returns what was
-- deleted, and whether a full batch suggests more.
--
-- With p_now, the cutoffs are p_now less the queue's settings as read once the partition is locked
-- (p_time_cutoff and p_completed_cutoff are then not used): a cycle lists the queues once, maybe
-- minutes before their turn, and a configure since (a longer retention, retention switched off)
-- must keep what it keeps from the moment it is answered.
-- its first form, without p_bytes_before, on databases migrated by a build of main between them:
-- beside this one, every call of six arguments was ambiguous
drop function if exists queen.retention_delete_v3(uuid, timestamptz, timestamptz, timestamptz,
                                                  integer, bigint);
create or replace function queen.retention_delete_v3(
    p_partition_id uuid,
    p_now timestamptz,
    p_time_cutoff timestamptz,
    p_completed_cutoff timestamptz,
    p_max_segments integer,
    p_max_bytes bigint,
    p_bytes_before bigint default 0)
returns table (segments integer, messages bigint, bytes bigint, more boolean)
language plpgsql
-- a push left open (a frozen broker host) held the partition, and so the page and the pushes to
-- its other partitions, until PostgreSQL noticed the lost connection: past 2 s the page fails, is
-- tried again a partition at a time, and only the held one is passed over, logged (ops/Retention).
-- A partition under steady pushes is not starved: its lock comes in turn within milliseconds.
set lock_timeout = '2s'
as $$
#variable_conflict use_column
declare
    v_time_cutoff      timestamptz := p_time_cutoff;
    v_completed_cutoff timestamptz := p_completed_cutoff;
    v_queue   uuid;
    v_from    bigint;
    v_last    bigint;
    v_done    bigint := -1;
    v_held    bigint;
    v_to      bigint;
    v_segs    integer := 0;
    v_msgs    bigint := 0;
    v_bytes   bigint := 0;
    v_subs    timestamptz[];
    v_sub     timestamptz;
    v_full    boolean := false;
    s         record;
begin
    if not pg_try_advisory_xact_lock(hashtextextended(p_partition_id::text, 47)) then
        return query select 0, 0::bigint, 0::bigint, false;
        return;
    end if;
    select p.queue_id, p.retained_from, p.last_offset into v_queue, v_from, v_last
      from queen.log_partitions p
     where p.id = p_partition_id
       for no key update;
    if not found then
        -- its queue was deleted meanwhile
        return query select 0, 0::bigint, 0::bigint, false;
        return;
    end if;
    if not pg_try_advisory_xact_lock_shared(hashtextextended(v_queue::text, 44)) then
        -- a seek of the queue is moving cursors back: their committed offsets read now are the
        -- old ones, and what they cover is what the seek replays (passed over until the next cycle)
        return query select 0, 0::bigint, 0::bigint, false;
        return;
    end if;
    if p_now is not null then
        select case when q.retention_enabled and q.retention_seconds > 0
                    then p_now - make_interval(secs => q.retention_seconds) end,
               case when q.retention_enabled and q.completed_retention_seconds > 0
                    then p_now - make_interval(secs => q.completed_retention_seconds) end
          into v_time_cutoff, v_completed_cutoff
          from queen.queues q
         where q.id = v_queue;
    end if;

    if v_completed_cutoff is not null then
        -- the cursors and the subscribed groups without one in one snapshot: read apart, a group's
        -- first cursor committed in between was counted by neither, and its backlog deleted
        select (select min(c.committed) from queen.log_consumers c
                 where c.partition_id = p_partition_id),
               -- queue mode reads from the first message whatever its row says (a subscription
               -- set on it by an older broker)
               array(select case when m.consumer_group <> '__QUEUE_MODE__'
                                 then m.subscription_timestamp end
                       from queen.consumer_groups_metadata m
                      where m.queue_id = v_queue
                        and not exists (select 1 from queen.log_consumers c
                                         where c.partition_id = p_partition_id
                                           and c.consumer_group = m.consumer_group))
          into v_done, v_subs;
        -- groups subscribed to the queue without a cursor here yet: what their seed will take
        foreach v_sub in array v_subs loop
            v_held := least(v_held,
                            case when v_sub is null then -1
                                 else queen.log_seek_v1(p_partition_id, v_sub, v_last) end);
        end loop;
        v_done := coalesce(least(v_done, v_held), -1);
    end if;

    for s in
        select ls.base_offset, ls.msg_count, ls.created_at, octet_length(ls.blob) as size
          from queen.log_segments ls
         where ls.partition_id = p_partition_id and ls.base_offset >= v_from
         order by ls.base_offset
         limit p_max_segments
    loop
        -- a null cutoff is a rule that is off
        exit when not (coalesce(s.created_at < v_time_cutoff, false)
                       or coalesce(s.created_at < v_completed_cutoff
                                   and s.base_offset + s.msg_count - 1 <= v_done, false));
        -- within the byte budget of the transaction (p_bytes_before deleted in it already), but
        -- at least its first segment: 1,000 segments of 1 MB in one transaction held a push to
        -- the partition 2.2 s
        if (v_segs > 0 or p_bytes_before > 0)
           and p_bytes_before + v_bytes + s.size > p_max_bytes then
            v_full := true;
            exit;
        end if;
        v_to := s.base_offset + s.msg_count;
        v_segs := v_segs + 1;
        v_msgs := v_msgs + s.msg_count;
        v_bytes := v_bytes + s.size;
    end loop;
    if v_to is null then
        -- more when the budget stopped it: the partition comes first in the next transaction
        return query select 0, 0::bigint, 0::bigint, v_full;
        return;
    end if;

    delete from queen.log_segments ls
     where ls.partition_id = p_partition_id and ls.base_offset >= v_from and ls.base_offset < v_to;
    update queen.log_partitions p set retained_from = v_to where p.id = p_partition_id;
    -- traces belong to their message
    delete from queen.message_traces t
     where t.partition_id = p_partition_id and t.msg_offset < v_to;

    if v_to > v_last then
        -- nothing retained: every index entry of the partition is dead
        delete from queen.log_txn_index t where t.partition_id = p_partition_id;
    end if;
    return query select v_segs, v_msgs, v_bytes, v_full or v_segs = p_max_segments;
end;
$$;

-- retention_delete_v3 without a byte budget: the brokers of releases before v3 call it.
create or replace function queen.retention_delete_v2(
    p_partition_id uuid,
    p_now timestamptz,
    p_time_cutoff timestamptz,
    p_completed_cutoff timestamptz,
    p_max_segments integer)
returns table (segments integer, messages bigint, bytes bigint, more boolean)
language sql
as $$
    select * from queen.retention_delete_v3(p_partition_id, p_now, p_time_cutoff,
                                            p_completed_cutoff, p_max_segments, null);
$$;

-- retention_delete_v2 with the cutoffs given: the brokers of releases before v2 call it.
create or replace function queen.retention_delete_v1(
    p_partition_id uuid,
    p_time_cutoff timestamptz,
    p_completed_cutoff timestamptz,
    p_max_segments integer)
returns table (segments integer, messages bigint, bytes bigint, more boolean)
language sql
as $$
    select * from queen.retention_delete_v2(p_partition_id, null, p_time_cutoff, p_completed_cutoff,
                                            p_max_segments);
$$;

-- Deletes at most p_max dead letters of a queue dead-lettered more than its retentionSeconds (as
-- set now, see retention_delete_v3) before p_now, from the partitions after p_after in id order:
-- none when retention was switched off since the cycle listed the queue. Without p_now, those
-- dead-lettered before p_cutoff. Returns how many, and the last partition left with none to
-- delete: the caller's next call starts after it (starting over, each call probed every partition
-- drained before: about 10^8 probes a cycle at a million dead letters over 100,000 partitions).
-- The partitions holding some, then one partition per statement (on Citus: one worker each).
create or replace function queen.retention_dead_letters_v2(
    p_queue_id uuid, p_now timestamptz, p_cutoff timestamptz, p_after uuid, p_max integer)
returns table (deleted integer, last_partition uuid)
language plpgsql
as $$
#variable_conflict use_column
declare
    v_cutoff timestamptz := p_cutoff;
    v_left   integer := p_max;
    v_n      integer;
    v_pid    uuid;
    v_last   uuid := p_after;
begin
    if p_now is not null then
        select p_now - make_interval(secs => q.retention_seconds) into v_cutoff
          from queen.queues q
         where q.id = p_queue_id and q.retention_enabled and q.retention_seconds > 0;
    end if;
    if v_cutoff is null then
        return query select 0, p_after;
        return;
    end if;
    for v_pid in
        select p.id
          from queen.log_partitions p
         where p.queue_id = p_queue_id
           and (p_after is null or p.id > p_after)
           and exists (select 1 from queen.dead_letters x
                        where x.partition_id = p.id and x.failed_at < v_cutoff)
         order by p.id
    loop
        delete from queen.dead_letters d
         where d.partition_id = v_pid
           and (d.consumer_group, d.msg_offset) in
               (select x.consumer_group, x.msg_offset
                  from queen.dead_letters x
                 where x.partition_id = v_pid and x.failed_at < v_cutoff
                 limit v_left);
        get diagnostics v_n = row_count;
        v_left := v_left - v_n;
        -- a partition that took the rest of the budget may hold more: the next call starts at it
        exit when v_left <= 0;
        v_last := v_pid;
    end loop;
    return query select p_max - v_left, v_last;
end;
$$;

-- retention_dead_letters_v2 by a cutoff, from the first partition: the brokers of releases before
-- v2 call it.
create or replace function queen.retention_dead_letters_v1(
    p_queue_id uuid, p_cutoff timestamptz, p_max integer)
returns integer
language sql
as $$
    select d.deleted from queen.retention_dead_letters_v2(p_queue_id, null, p_cutoff, null, p_max) d;
$$;

-- Several partitions' bounded batches in one transaction: retention_delete_v3 on each of
-- p_partition_ids in turn, sharing one budget of p_max_segments segments and p_max_bytes bytes
-- (but at least one segment, alone when bigger than the budget). Returns what was deleted and how
-- many of the partitions, from the first, are done (nothing more to delete now, or skipped because
-- another worker holds them); the one where the budget ran out may hold more and comes first in
-- the caller's next call. A push waits for one
-- such transaction at most, as for a single partition's batch; a call per partition kept retention
-- from keeping up with a partition per push (about 160 partitions a second here).
create or replace function queen.retention_delete_page_v3(
    p_partition_ids uuid[],
    p_now timestamptz,
    p_time_cutoff timestamptz,
    p_completed_cutoff timestamptz,
    p_max_segments integer,
    p_max_bytes bigint)
returns table (segments integer, messages bigint, bytes bigint, done integer)
language plpgsql
as $$
#variable_conflict use_column
declare
    v_left  integer := p_max_segments;
    v_segs  integer := 0;
    v_msgs  bigint := 0;
    v_bytes bigint := 0;
    v_done  integer := 0;
    v_pid   uuid;
    d       record;
begin
    foreach v_pid in array p_partition_ids loop
        exit when v_left <= 0 or v_bytes >= p_max_bytes;
        select * into d from queen.retention_delete_v3(v_pid, p_now, p_time_cutoff,
                                                       p_completed_cutoff, v_left, p_max_bytes,
                                                       v_bytes);
        v_segs := v_segs + d.segments;
        v_msgs := v_msgs + d.messages;
        v_bytes := v_bytes + d.bytes;
        v_left := v_left - d.segments;
        exit when d.more;
        v_done := v_done + 1;
    end loop;
    return query select v_segs, v_msgs, v_bytes, v_done;
end;
$$;

-- retention_delete_page_v3 without a byte budget: the brokers of releases before v3 call it.
create or replace function queen.retention_delete_page_v2(
    p_partition_ids uuid[],
    p_now timestamptz,
    p_time_cutoff timestamptz,
    p_completed_cutoff timestamptz,
    p_max_segments integer)
returns table (segments integer, messages bigint, bytes bigint, done integer)
language sql
as $$
    select * from queen.retention_delete_page_v3(p_partition_ids, p_now, p_time_cutoff,
                                                 p_completed_cutoff, p_max_segments, null);
$$;

-- retention_delete_page_v2 with the cutoffs given, as the cycle computed them: the brokers of
-- releases before v2 call it.
create or replace function queen.retention_delete_page_v1(
    p_partition_ids uuid[],
    p_time_cutoff timestamptz,
    p_completed_cutoff timestamptz,
    p_max_segments integer)
returns table (segments integer, messages bigint, bytes bigint, done integer)
language sql
as $$
    select * from queen.retention_delete_page_v2(p_partition_ids, null, p_time_cutoff,
                                                 p_completed_cutoff, p_max_segments);
$$;
