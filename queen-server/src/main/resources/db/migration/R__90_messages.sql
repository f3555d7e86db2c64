-- Reading messages for the admin routes.

-- The segment holding each (partition, offset) pair, for the caller to slice: one primary-key
-- probe per pair. Pairs whose message retention deleted are left out.
create or replace function queen.segments_at_v1(p_partition_ids uuid[], p_offsets bigint[])
returns table (idx integer, base_offset bigint, created_at timestamptz, blob bytea)
language plpgsql
stable
as $$
#variable_conflict use_column
declare
    u record;
begin
    -- one partition per statement: on Citus each goes to the partition's worker alone
    for u in
        select t.pid, t.off, t.i from unnest(p_partition_ids, p_offsets) with ordinality as t(pid, off, i)
         order by t.i
    loop
        return query
        select (u.i - 1)::integer, s.base_offset, s.created_at, s.blob
          from (select ls.base_offset, ls.msg_count, ls.created_at, ls.blob
                  from queen.log_segments ls
                 where ls.partition_id = u.pid and ls.base_offset <= u.off
                 order by ls.base_offset desc
                 limit 1) s
         where s.base_offset + s.msg_count > u.off;
    end loop;
end;
$$;

-- Where one message stands for every group reading its partition: per cursor, whether the group
-- committed past it, holds it in a live lease, or dead-lettered it.
create or replace function queen.message_groups_v1(p_partition_id uuid, p_offset bigint)
returns table (consumer_group text, consumed boolean, leased boolean,
               lease_expires_at timestamptz, dead_lettered boolean, error_message text,
               retry_count integer)
language plpgsql
stable
as $$
#variable_conflict use_column
begin
    return query
    select c.consumer_group,
           c.committed >= p_offset or d.msg_offset is not null,
           d.msg_offset is null and c.committed < p_offset and c.batch_end >= p_offset
               and c.worker_id is not null and c.lease_expires_at > now(),
           case when c.batch_end >= p_offset and c.lease_expires_at > now()
                then c.lease_expires_at end,
           d.msg_offset is not null, d.error_message,
           coalesce(d.retry_count, case when c.attempt_offset = p_offset
                                        then greatest(c.attempt_count - 1, 0) else 0 end)
      from queen.log_consumers c
      left join queen.dead_letters d
             on d.partition_id = c.partition_id and d.consumer_group = c.consumer_group
            and d.msg_offset = p_offset
     where c.partition_id = p_partition_id
     order by c.consumer_group = '__QUEUE_MODE__' desc, c.consumer_group;
end;
$$;

-- One page of messages, newest first, without payloads: (partition, offset) with its status
-- (queue_status: in queue mode, null when the partition has no queue-mode cursor) and how many of
-- the other groups reading the partition consumed it; the caller reads transaction ids from the
-- blobs of the page's segments only. Bounded: partitions are taken newest write first, at most
-- p_limit + p_offset of them (the newest messages can come from no others) or, with a status
-- filter, at most 1000, each contributing its newest p_limit + p_offset segments in the window.
-- Each partition first contributes its newest 4 segments; while a partition read to that depth
-- could still hold part of the page (or the page is short, as under a status filter few messages
-- match), every candidate partition is read again 4x deeper, up to limit + offset segments. A page
-- of 200 over 200 busy partitions read 40,000 segments before, about 800 now; a status filter
-- that matches little costs up to a third more than the old single pass.
create or replace function queen.messages_list_v1(
    p_queue text, p_partition text, p_namespace text, p_task text, p_status text,
    p_from timestamptz, p_to timestamptz, p_limit integer, p_offset integer)
returns table (partition_id uuid, msg_offset bigint, base_offset bigint, created_at timestamptz,
               queue_name text, partition_name text, namespace text, task text, priority integer,
               status text, queue_status text, lease_expires_at timestamptz,
               consumed_by integer, total_groups integer)
language plpgsql
stable
set jit = off
as $$
#variable_conflict use_column
declare
    v_ids   uuid[];
    v_pid   uuid;
    v_rows  jsonb;
    v_need  integer := p_limit + p_offset;
    v_depth integer := least(4, p_limit + p_offset);
    v_edge  timestamptz;
    -- the oldest segment read of each partition read to the full depth: it may hold more
    v_full  timestamptz[];
begin
    -- the partitions written to most recently that match the filters, at most 1000. A named
    -- partition by its derived id, computed from the matching queues first (a statement of its
    -- own: a generic plan of "p_partition is null or ..." scanned all 10,000 partitions, 38 ms
    -- against 0.2; on Citus a lookup by id goes to the partition's worker alone)
    if p_partition is not null then
        v_ids := array(
            select queen.partition_uuid(q.id, p_partition)
              from queen.queues q
             where (p_queue is null or q.name = p_queue)
               and (p_namespace is null or q.namespace = p_namespace)
               and (p_task is null or q.task = p_task));
        v_ids := array(
            select p.id
              from queen.log_partitions p
             where p.id = any (v_ids)
               and p.newest_created_at >= p_from
             order by p.newest_created_at desc
             limit case when p_status is null then p_limit + p_offset else 1000 end);
    else
        v_ids := array(
            select p.id
              from queen.log_partitions p
              join queen.queues q on q.id = p.queue_id
             where (p_queue is null or q.name = p_queue)
               and (p_namespace is null or q.namespace = p_namespace)
               and (p_task is null or q.task = p_task)
               and p.newest_created_at >= p_from
             order by p.newest_created_at desc
             limit case when p_status is null then p_limit + p_offset else 1000 end);
    end if;
    -- On Citus a statement that reads segments per partition must name one partition to run:
    -- there the page is gathered partition by partition (v_pid), the newest limit + offset of
    -- each, and cut below; on plain PostgreSQL one pass over every partition (v_pid null).
    loop
    v_rows := '[]';
    v_full := '{}';
    for v_pid in select * from queen.partition_passes(v_ids) loop
    v_rows := v_rows || (
    with parts as (
        select p.id, p.name, p.retained_from, q.name as queue_name, q.namespace, q.task,
               q.priority
          from queen.log_partitions p
          join queen.queues q on q.id = p.queue_id
         where p.id = coalesce(v_pid, p.id) and p.id = any (v_ids)),
    segs_all as (
        select pt.*, s.base_offset, s.msg_count, s.created_at
          from parts pt
         -- a partition's segments are created in offset order: the window's start is applied
         -- after the limit, or an index scan for the newest in-window segments of a partition with
         -- fewer than that many reads every older segment it has before it gives up
         cross join lateral (select ls.base_offset, ls.msg_count, ls.created_at
                               from queen.log_segments ls
                              where ls.partition_id = coalesce(v_pid, pt.id) and ls.base_offset >= pt.retained_from
                                and ls.created_at <= p_to
                              order by ls.base_offset desc
                              limit v_depth) s
         where s.created_at >= p_from),
    -- without a status filter the page lies in the newest segments holding limit + offset
    -- messages (a segment's messages share their created_at): expand only those
    segs as (
        select sa.* from (
            select x.*, sum(x.msg_count) over (order by x.created_at desc, x.base_offset desc,
                                                        x.id) as upto
              from segs_all x) sa
         where p_status is not null or sa.upto - sa.msg_count < p_limit + p_offset),
    msgs as (
        select sg.id, o.off, sg.base_offset, sg.created_at, sg.queue_name, sg.name,
               sg.namespace, sg.task, sg.priority, qm.partition_id is not null as has_qm,
               case when d.msg_offset is not null then 'dead_letter'
                    when qm.committed >= o.off then 'completed'
                    when qm.batch_end >= o.off and qm.worker_id is not null
                         and qm.lease_expires_at > now() then 'processing'
                    else 'pending' end as qm_status,
               case when qm.batch_end >= o.off and qm.committed < o.off
                         and qm.lease_expires_at > now() then qm.lease_expires_at end as lease_at,
               bus.consumed_by, bus.total_groups
          from segs sg
         cross join lateral generate_series(sg.base_offset + sg.msg_count - 1, sg.base_offset, -1)
               as o(off)
          left join queen.log_consumers qm
                 on qm.partition_id = coalesce(v_pid, sg.id) and qm.consumer_group = '__QUEUE_MODE__'
          left join queen.dead_letters d
                 on d.partition_id = coalesce(v_pid, sg.id) and d.consumer_group = '__QUEUE_MODE__'
                and d.msg_offset = o.off
         cross join lateral (
             select (count(*) filter (where c.committed >= o.off))::integer as consumed_by,
                    count(*)::integer as total_groups
               from queen.log_consumers c
              where c.partition_id = coalesce(v_pid, sg.id) and c.consumer_group <> '__QUEUE_MODE__') bus),
    statused as (
        -- a partition read in queue mode has its queue-mode status; one read only by groups is
        -- completed once every group consumed it
        select m.*,
               case when m.has_qm then m.qm_status
                    when m.total_groups > 0 and m.consumed_by = m.total_groups then 'completed'
                    else 'pending' end as status
          from msgs m)
    select coalesce(jsonb_agg(to_jsonb(r)), '[]')
      from (select m.id as partition_id, m.off as msg_offset, m.base_offset, m.created_at,
                   m.queue_name, m.name as partition_name, m.namespace, m.task, m.priority,
                   m.status, case when m.has_qm then m.qm_status end as queue_status,
                   m.lease_at as lease_expires_at, m.consumed_by, m.total_groups
              from statused m
             where p_status is null or m.status = p_status
             order by m.created_at desc, m.off desc
             limit p_limit + p_offset) r);
    if v_depth < v_need then
        v_full := v_full || array(
            select d.oldest
              from queen.log_partitions p
             cross join lateral (select count(*) as n, min(s.created_at) as oldest
                                   from (select ls.created_at
                                           from queen.log_segments ls
                                          where ls.partition_id = coalesce(v_pid, p.id)
                                            and ls.base_offset >= p.retained_from
                                            and ls.created_at <= p_to
                                          order by ls.base_offset desc
                                          limit v_depth) s
                                  where s.created_at >= p_from) d
             where p.id = coalesce(v_pid, p.id) and p.id = any (v_ids) and d.n = v_depth);
    end if;
    end loop;
    exit when v_depth >= v_need;
    -- the page is complete unless a partition read to the full depth could hold a message at or
    -- after the page's oldest one (any message, while the page is short)
    select max((x.e ->> 'created_at')::timestamptz) into v_edge
      from (select e from jsonb_array_elements(v_rows) as e
             order by (e ->> 'created_at')::timestamptz desc, (e ->> 'msg_offset')::bigint desc
            offset v_need - 1 limit 1) x;
    exit when not exists (select 1 from unnest(v_full) as f(oldest)
                           where v_edge is null or f.oldest >= v_edge);
    v_depth := least(v_depth * 4, v_need);
    end loop;
    return query
    select r.partition_id, r.msg_offset, r.base_offset, r.created_at, r.queue_name,
           r.partition_name, r.namespace, r.task, r.priority, r.status, r.queue_status,
           r.lease_expires_at, r.consumed_by, r.total_groups
      from jsonb_to_recordset(v_rows) as r(
               partition_id uuid, msg_offset bigint, base_offset bigint, created_at timestamptz,
               queue_name text, partition_name text, namespace text, task text,
               priority integer, status text, queue_status text, lease_expires_at timestamptz,
               consumed_by integer, total_groups integer)
     order by r.created_at desc, r.msg_offset desc
     limit p_limit offset p_offset;
end;
$$;
