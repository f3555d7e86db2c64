-- A page of messages for the admin routes; one message's reads are in R__89_message_segments.sql.

-- One page of messages, newest first, without payloads: (partition, offset) with its status
-- (queue_status: in queue mode, null when the partition has no queue-mode cursor) and how many of
-- the other groups reading the partition consumed it; the caller reads transaction ids from the
-- blobs of the page's segments only. Bounded: partitions are taken newest write first (one written
-- after p_to as if written at p_to), at most p_limit + p_offset of them besides those written after
-- p_to (the newest messages can come from no others) or, with a status filter, the 1000 newest
-- whose cursors leave offsets of that status (completed: by the date of their newest completed
-- message, from the cursors). Each partition first contributes its newest 4 segments (1 under a
-- status filter but completed); those read to that depth that could still hold part of the page
-- (any, while the page is short) are read again 4x deeper, beside the next candidates (v_batch at
-- most, and all written after p_to). A page of 200 over 200 busy partitions read 40,000 segments
-- before, 800 now. A status filter reads only the offsets that can hold that status, one range per
-- partition known from its cursors (the dead letters' from their rows): reading from the newest
-- segment down, a filter that matched little took 5-20 s at 10,000 partitions.
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
    -- not now() in the statement over many partitions: Citus takes only immutable functions there
    v_now   timestamptz := now();
    v_ids   uuid[];
    -- with a status filter, the offsets of each partition of v_ids that can hold it
    v_lo    bigint[] := '{}';
    v_hi    bigint[] := '{}';
    -- the partitions of one shard (Citus), or null: all of them in one statement
    v_grp   uuid[];
    v_rows  jsonb;
    v_page  jsonb;
    v_need  integer := p_limit + p_offset;
    -- segments per partition in the first round: a status filter takes up to 1000 partitions, few
    -- holding the page, but completed's first ones (dated by their cursors) hold it: one round
    -- where a segment each took two or three (pending this deep took 4x longer)
    v_depth integer := case when p_status is null or p_status = 'completed'
                            then least(4, v_need) else 1 end;
    v_edge  timestamptz;
    -- the partitions read in this round: the first candidates, then those that may hold more of
    -- the page and the candidates that may be newer than its oldest message
    v_pass  uuid[];
    -- the partitions read to the full depth (they may hold more), with their oldest segment read
    v_full  uuid[];
    v_full_at timestamptz[];
    v_deep  uuid[];
    v_deep_at timestamptz[];
    -- each candidate's newest write, and the first candidate not read yet
    v_newest timestamptz[] := '{}';
    v_next  integer := 1;
    -- candidates of the first round: unfiltered on plain PostgreSQL all limit + offset (one
    -- statement reads them in a few ms; rounds made the list 1.5x slower under load); unfiltered
    -- on Citus and pending 16 (a pending message is a partition's newest, dated by its newest
    -- write), completed 16 (dated by their cursors); other statuses all (up to the 1000 holding it)
    v_batch integer := case when p_status is null and not queen.distributed() then v_need
                            when p_status is null or p_status in ('pending', 'completed')
                            then least(v_need, 16)
                            else 1000 end;
    -- the partitions matching the other filters, newest write first: with a status filter, the
    -- first of them whose cursors were not read yet, and whether there may be more than were
    -- taken. Pending takes 256 at first, 4x more when the cursors read need them (sorting all
    -- 10,000 partitions of a queue took a third of its time); processing and dead letters take
    -- all; completed takes none (queen.messages_completed_candidates_v1 orders them itself)
    v_all   uuid[];
    v_all_newest timestamptz[];
    v_all_offsets bigint[] := '{}';
    v_take  integer := case when p_status is null then v_need
                            when p_status = 'pending' then 256 end;
    v_more  boolean := false;
    -- how many of the candidates were written after p_to
    v_after integer := 0;
    v_scan  integer := 1;
    v_last  integer;
    v_taken integer;
    v_late  integer;
    v_step  integer;
begin
    if p_status <> 'completed' or queen.distributed() then
        -- planned for each call, until the transaction ends: the generic plans of a status filter
        -- took twice as long; Citus routes a statement by its partition ids' values. No filter
        -- keeps cached plans, and so do completed's rounds, generic from a connection's first call
        -- (per-call plans made them a third and a fifth slower; a new admin connection's first
        -- five custom plans took 37-56 ms a page against 29); its candidates plan each call
        perform set_config('plan_cache_mode', 'force_custom_plan', true);
    elsif p_status = 'completed' then
        perform set_config('plan_cache_mode', 'force_generic_plan', true);
    end if;
    -- the partitions written to most recently that match the filters. A named partition by its
    -- derived id, computed from the matching queues first (a statement of its own: a generic plan
    -- of "p_partition is null or ..." scanned all 10,000 partitions, 38 ms against 0.2; on Citus a
    -- lookup by id goes to the partition's worker alone)
    if p_partition is not null then
        v_ids := array(
            select queen.partition_uuid(q.id, p_partition)
              from queen.queues q
             where (p_queue is null or q.name = p_queue)
               and (p_namespace is null or q.namespace = p_namespace)
               and (p_task is null or q.task = p_task));
        -- dated as queen.messages_candidates_v1 dates them; all of them are candidates
        select coalesce(array_agg(x.id order by x.newest desc, x.last_offset desc, x.id), '{}'),
               coalesce(array_agg(x.newest order by x.newest desc, x.last_offset desc, x.id), '{}'),
               count(*) filter (where x.after_to)
          into v_all, v_all_newest, v_after
          from (select p.id, least(p.newest_created_at, p_to) as newest, p.last_offset,
                       p.newest_created_at > p_to as after_to
                  from queen.log_partitions p
                 where p.id = any (v_ids)
                   and p.newest_created_at >= p_from) x;
    elsif p_status is distinct from 'completed' then
        select f.candidate_ids, f.candidate_newest, f.candidate_offsets, f.written_after_to
          into v_all, v_all_newest, v_all_offsets, v_after
          from queen.messages_first_candidates_v1(p_queue, p_namespace, p_task, p_from, p_to,
                                                  v_take,
                                                  case when p_status is null then v_need end) f;
        v_more := coalesce(cardinality(v_all) = v_take, false);
    end if;
    if p_status is null then
        v_ids := v_all[1:v_need + v_after];
        v_newest := v_all_newest[1:v_need + v_after];
    elsif p_status = 'completed' then
        select c.ids, c.lo, c.hi, c.newest into v_ids, v_lo, v_hi, v_newest
          from queen.messages_completed_candidates_v1(
                   p_queue, p_namespace, p_task, case when p_partition is not null then v_all end,
                   p_from, p_to) c;
    else
        v_ids := '{}';
    end if;
    -- On Citus a statement that reads segments per partition must stay within one shard to run:
    -- there the page is gathered shard by shard (v_grp; every table of the statement filtered by
    -- the shard's ids, or Citus sends it to every shard) and cut below; on plain PostgreSQL one
    -- pass over every partition (v_grp null).
    v_rows := '[]';
    v_pass := '{}';
    -- the candidates newest write first, v_batch of them to begin with, more each round while the
    -- page is short: one whose newest message is older than the page's oldest cannot hold any of
    -- it, and a busy queue's newest 200 messages often lie in a few partitions
    loop
    if p_status <> 'completed' then
        -- the cursors of the next candidates, only as far as this round takes them: the page of
        -- pending messages usually lies in the first few dozen, and reading the cursors of 1000
        -- took most of its time (10,000 partitions)
        loop
            exit when cardinality(v_ids) >= 1000 or v_scan > cardinality(v_all) and not v_more
                      or v_edge is null and cardinality(v_ids) >= v_next + v_batch - 1
                      or v_all_newest[v_scan - 1] < v_edge;
            v_step := case when p_status <> 'pending' then cardinality(v_all)
                           when v_edge is null
                           then greatest(32, 2 * (v_next + v_batch - 1 - cardinality(v_ids)))
                           else greatest(32, cardinality(v_ids)) end;
            if v_more and v_scan + v_step - 1 > cardinality(v_all) then
                -- the next candidates after the last one taken, 4x as many and at least what
                -- this step reads (v_scan moves past the whole step)
                v_take := greatest(v_take * 4, v_scan + v_step - 1 - cardinality(v_all));
                select v_all || coalesce(array_agg(c.id order by c.n), '{}'),
                       v_all_newest || coalesce(array_agg(c.newest order by c.n), '{}'),
                       v_all_offsets || coalesce(array_agg(c.last_offset order by c.n), '{}'),
                       count(*) = v_take
                  into v_all, v_all_newest, v_all_offsets, v_more
                  from queen.messages_candidates_v1(
                           p_queue, p_namespace, p_task, p_from, p_to,
                           v_all_newest[cardinality(v_all)], v_all_offsets[cardinality(v_all)],
                           v_all[cardinality(v_all)], v_take)
                       with ordinality as c(id, newest, last_offset, after_to, n);
            end if;
            -- the statuses' offset ranges (completed: queen.messages_completed_candidates_v1): in
            -- queue mode processing up to the end of its live lease, pending after; read only by
            -- groups, pending after the slowest group's cursor. In the order given, so
            -- that the statement stops at the 1000th partition that can hold the status; one
            -- statement that Citus runs on each worker
            select v_ids || coalesce(array_agg(x.id order by x.i), '{}'),
                   v_lo || coalesce(array_agg(x.lo order by x.i), '{}'),
                   v_hi || coalesce(array_agg(x.hi order by x.i), '{}'),
                   v_newest || coalesce(array_agg(x.newest order by x.i), '{}')
              into v_ids, v_lo, v_hi, v_newest
              from (select r.* from (select y.i, y.id, y.newest,
                           greatest(y.retained_from, case
                               when y.has_qm then case p_status
                                    when 'processing' then y.committed + 1
                                    when 'pending' then y.leased_to + 1
                                    when 'dead_letter' then y.dl_first end
                               when p_status = 'pending'
                                    then coalesce(y.groups_committed + 1, y.retained_from)
                           end) as lo,
                           case
                               when y.has_qm then case p_status
                                    when 'processing' then y.leased_to
                                    when 'pending' then y.last_offset
                                    when 'dead_letter' then y.dl_last end
                               when p_status = 'pending' then y.last_offset
                           end as hi
                      from (select u.i, p.id, p.newest_created_at as newest, p.retained_from,
                                   p.last_offset, qm.partition_id is not null as has_qm,
                                   qm.committed,
                                   case when qm.worker_id is not null
                                             and qm.lease_expires_at > v_now
                                        then greatest(qm.batch_end, qm.committed)
                                        else qm.committed end as leased_to,
                                   g.committed as groups_committed,
                                   dl.first as dl_first, dl.last as dl_last
                              from (select c.id, c.i
                                      from unnest(v_all[v_scan:v_scan + v_step - 1])
                                           with ordinality as c(id, i)
                                     order by c.i) u
                              join queen.log_partitions p on p.id = u.id
                              left join queen.log_consumers qm
                                     on qm.partition_id = p.id
                                    and qm.consumer_group = '__QUEUE_MODE__'
                             cross join lateral (
                                 select min(c.committed) as committed
                                   from queen.log_consumers c
                                  where c.partition_id = p.id
                                    and c.consumer_group <> '__QUEUE_MODE__') g
                             -- for every status: Citus refuses a lateral subquery that a
                             -- constant condition (p_status = ...) empties
                             cross join lateral (
                                 select min(d.msg_offset) as first, max(d.msg_offset) as last
                                   from queen.dead_letters d
                                  where d.partition_id = p.id
                                    and d.consumer_group = '__QUEUE_MODE__') dl) y) r
                     where r.lo <= r.hi
                     order by r.i
                     limit 1000 - cardinality(v_ids)) x;
            v_scan := v_scan + v_step;
        end loop;
    end if;
    -- at most v_batch new candidates a round (v_last the last taken) besides those written after
    -- p_to (first in order), which any page may need: a page's first partitions, read 4 deep, date
    -- it weakly (937 of 952 candidates were newer) and read deeper often hold it
    v_late := (select count(*) from generate_subscripts(v_ids, 1) as i
                where i >= v_next and v_newest[i] >= p_to);
    select v_pass || coalesce(array_agg(v_ids[c.i] order by c.i), '{}'), max(c.i), count(*)
      into v_pass, v_last, v_taken
      from (select i from generate_subscripts(v_ids, 1) as i
             where i >= v_next
               and (v_newest[i] >= v_edge or v_edge is null and i < v_next + v_batch)
             order by i
             limit v_batch + v_late) c;
    -- the newest write first: once the page has its oldest message, no later candidate is newer
    v_next := case when v_edge is null then v_next + v_batch
                   when v_taken = v_batch + v_late then v_last + 1
                   else cardinality(v_ids) + 1 end;
    -- the second round as many as the first (a round reads its new candidates as deep as the
    -- partitions it reads again: 4x more in the second made pending 1.4x slower), then 4x more;
    -- past limit + offset once the page has an edge (10,000 partitions written after a past `to`
    -- all qualify: 200 a round took 50 rounds)
    if v_next > v_batch + 1 then
        v_batch := case when v_edge is null then least(v_batch * 4, v_need)
                        else least(v_batch * 4, 1000000) end;
    end if;
    exit when cardinality(v_pass) = 0;
    v_full := '{}';
    v_full_at := '{}';
    for v_grp in select * from queen.shard_groups(v_pass) loop
    with parts as (
        select p.id, p.name, q.name as queue_name, q.namespace, q.task, q.priority, b.lo, b.hi,
               qm.partition_id is not null as has_qm,
               -- the segment holding the range's first offset, where the index scan stops
               case when p_status is null or b.lo <= p.retained_from then b.lo
                    else coalesce((select max(ls.base_offset) from queen.log_segments ls
                                    where ls.partition_id = p.id
                                      and (v_grp is null or ls.partition_id = any (v_grp))
                                      and ls.base_offset <= b.lo), b.lo) end as lo_base
          from queen.log_partitions p
          join queen.queues q on q.id = p.queue_id
          left join queen.log_consumers qm
                 on qm.partition_id = p.id and qm.consumer_group = '__QUEUE_MODE__'
                and (v_grp is null or qm.partition_id = any (v_grp))
          -- each partition's range by a join: looked up by array position, 1000 partitions of a
          -- completed page took 18 ms of comparisons. None unfiltered, where v_ids holds up to
          -- limit + offset ids and no ranges
          left join unnest(case when p_status is not null then v_ids end, v_lo, v_hi)
                    as r(id, lo, hi) on r.id = p.id
         cross join lateral (
             select case when p_status is null then p.retained_from else r.lo end as lo,
                    case when p_status is null then p.last_offset else r.hi end as hi) b
         where p.id = any (coalesce(v_grp, v_pass))),
    segs_all as (
        select pt.*, s.base_offset, s.msg_count, s.created_at, m.n
          from parts pt
         -- a partition's segments are created in offset order: the window's start is applied
         -- after the limit, or an index scan for the newest in-window segments of a partition with
         -- fewer than that many reads every older segment it has before it gives up
         cross join lateral (select ls.base_offset, ls.msg_count, ls.created_at
                               from queen.log_segments ls
                              where ls.partition_id = pt.id
                                and (v_grp is null or ls.partition_id = any (v_grp))
                                and ls.base_offset >= pt.lo_base and ls.base_offset <= pt.hi
                                and ls.created_at <= p_to
                              order by ls.base_offset desc
                              limit v_depth) s
         -- how many of the segment's messages have the status asked for: those in the range but
         -- the dead letters of queue mode, or those dead letters (counted only under a filter)
         cross join lateral (
             select case when p_status is null then null
                         else (select count(*) from queen.dead_letters d
                                where d.partition_id = pt.id
                                  and (v_grp is null or d.partition_id = any (v_grp))
                                  and d.consumer_group = '__QUEUE_MODE__'
                                  and d.msg_offset between greatest(s.base_offset, pt.lo)
                                      and least(s.base_offset + s.msg_count - 1, pt.hi))
                    end as dl) q
         cross join lateral (
             select case when p_status is null then s.msg_count
                         when p_status = 'dead_letter' then q.dl
                         else least(s.base_offset + s.msg_count - 1, pt.hi)
                              - greatest(s.base_offset, pt.lo) + 1
                              - case when pt.has_qm then q.dl else 0 end
                    end as n) m
         where s.created_at >= p_from),
    -- the page lies in the newest segments holding limit + offset messages that match (a
    -- segment's messages share their created_at): expand only those (a status filter expanded
    -- every segment read, 400,000 messages for a page of 200 completed ones over 1,000 partitions)
    segs as (
        -- with every segment as new as the last one kept: one push stamps all its partitions'
        -- segments alike, and the page orders those by offset
        select c.* from (
            select sa.*, min(case when sa.upto - sa.n < p_limit + p_offset then sa.created_at end)
                             over () as cut_at
              from (select x.*, sum(x.n) over (order by x.created_at desc, x.base_offset desc,
                                                        x.id) as upto
                      from segs_all x) sa) c
         where c.created_at >= c.cut_at),
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
         cross join lateral generate_series(least(sg.base_offset + sg.msg_count - 1, sg.hi),
                                            greatest(sg.base_offset, sg.lo), -1) as o(off)
          left join queen.log_consumers qm
                 on qm.partition_id = sg.id and qm.consumer_group = '__QUEUE_MODE__'
                and (v_grp is null or qm.partition_id = any (v_grp))
          left join queen.dead_letters d
                 on d.partition_id = sg.id and d.consumer_group = '__QUEUE_MODE__'
                and (v_grp is null or d.partition_id = any (v_grp))
                and d.msg_offset = o.off
         cross join lateral (
             select (count(*) filter (where c.committed >= o.off))::integer as consumed_by,
                    count(*)::integer as total_groups
               from queen.log_consumers c
              where c.partition_id = sg.id and c.consumer_group <> '__QUEUE_MODE__'
                and (v_grp is null or c.partition_id = any (v_grp))) bus),
    statused as (
        -- a partition read in queue mode has its queue-mode status; one read only by groups is
        -- completed once every group consumed it
        select m.*,
               case when m.has_qm then m.qm_status
                    when m.total_groups > 0 and m.consumed_by = m.total_groups then 'completed'
                    else 'pending' end as status
          from msgs m)
    select (select coalesce(jsonb_agg(to_jsonb(r)), '[]')
              from (select m.id as partition_id, m.off as msg_offset, m.base_offset, m.created_at,
                           m.queue_name, m.name as partition_name, m.namespace, m.task, m.priority,
                           m.status, case when m.has_qm then m.qm_status end as queue_status,
                           m.lease_at as lease_expires_at, m.consumed_by, m.total_groups
                      from statused m
                     where p_status is null or m.status = p_status
                     order by m.created_at desc, m.off desc, m.id
                     limit p_limit + p_offset) r),
           f.ids, f.oldest
      into v_page, v_deep, v_deep_at
      from (select coalesce(array_agg(d.id), '{}') as ids,
                   coalesce(array_agg(d.oldest), '{}') as oldest
              from (select sa.id, min(sa.created_at) as oldest from segs_all sa
                     group by sa.id having count(*) = v_depth) d) f;
    v_rows := v_rows || v_page;
    v_full := v_full || v_deep;
    v_full_at := v_full_at || v_deep_at;
    end loop;
    -- the page is complete unless a partition read to the full depth could hold a message at or
    -- after the page's oldest one, or a candidate not read yet has a newer message than that
    -- (any, while the page is short). Those are read, the first deeper: the rows of the others
    -- stay (the page's messages from a partition not read again are among the newest of what was
    -- read)
    select max((x.e ->> 'created_at')::timestamptz) into v_edge
      from (select e from jsonb_array_elements(v_rows) as e
             order by (e ->> 'created_at')::timestamptz desc, (e ->> 'msg_offset')::bigint desc,
                      (e ->> 'partition_id')::uuid
            offset v_need - 1 limit 1) x;
    -- Unfiltered, limit + offset segments of a partition hold that many messages; under a filter a
    -- segment may hold none (a dead letter's range spans the segments between them), so the depth
    -- grows until a partition's range is read
    v_pass := case when v_depth < v_need or p_status is not null then
                   array(select f.id from unnest(v_full, v_full_at) as f(id, oldest)
                          where v_edge is null or f.oldest >= v_edge)
                   else '{}' end;
    v_rows := coalesce((select jsonb_agg(e) from jsonb_array_elements(v_rows) as e
                         where (e ->> 'partition_id')::uuid <> all (v_pass)), '[]');
    if cardinality(v_pass) > 0 then
        v_depth := case when p_status is null then least(v_depth * 4, v_need) else v_depth * 4 end;
    end if;
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
     order by r.created_at desc, r.msg_offset desc, r.partition_id
     limit p_limit offset p_offset;
end;
$$;
