-- The partitions a page of messages (R__90_messages.sql) reads, and the offsets of each that can
-- hold a status.

-- The partitions matching a list's filters written to since p_from, newest write first and,
-- among equal dates (one push stamps all its partitions alike), in the page's order of their
-- newest messages, by offset then id: a cut among them took arbitrary ones, and a page could miss
-- messages. Those after the one given by p_after_* only, at most p_limit (null: all).
create or replace function queen.messages_candidates_v1(
    p_queue text, p_namespace text, p_task text, p_from timestamptz,
    p_after_newest timestamptz, p_after_offset bigint, p_after_id uuid, p_limit integer)
returns table (id uuid, newest timestamptz, last_offset bigint)
language sql
stable
as $$
    select p.id, p.newest_created_at, p.last_offset
      from queen.log_partitions p
      join queen.queues q on q.id = p.queue_id
     where (p_queue is null or q.name = p_queue)
       and (p_namespace is null or q.namespace = p_namespace)
       and (p_task is null or q.task = p_task)
       and p.newest_created_at >= p_from
       and (p_after_newest is null
            or p.newest_created_at < p_after_newest
            or p.newest_created_at = p_after_newest
               and (p.last_offset < p_after_offset
                    or p.last_offset = p_after_offset and p.id > p_after_id))
     order by p.newest_created_at desc, p.last_offset desc, p.id
     limit p_limit
$$;

-- The offsets of each partition of p_ids (newest write first) that can hold p_status, at most
-- p_max partitions with such offsets, in the order given. Per offset range: in queue mode
-- completed up to the queue-mode cursor, processing up to the end of its live lease, pending
-- after; read only by groups, completed up to the slowest group's cursor, pending after. One
-- statement that Citus runs on each worker; p_now a parameter, for Citus takes only immutable
-- functions there.
create or replace function queen.messages_status_ranges_v1(
    p_ids uuid[], p_status text, p_now timestamptz, p_max integer)
returns table (i bigint, id uuid, lo bigint, hi bigint, newest timestamptz)
language sql
stable
as $$
    select r.i, r.id, r.lo, r.hi, r.newest
      from (select y.i, y.id, y.newest,
                   greatest(y.retained_from, case
                       when y.has_qm then case p_status
                            when 'completed' then y.retained_from
                            when 'processing' then y.committed + 1
                            when 'pending' then y.leased_to + 1
                            when 'dead_letter' then y.dl_first end
                       when p_status = 'completed' and y.groups > 0 then y.retained_from
                       when p_status = 'pending' then coalesce(y.groups_committed + 1,
                                                               y.retained_from)
                   end) as lo,
                   case
                       when y.has_qm then case p_status
                            when 'completed' then y.committed
                            when 'processing' then y.leased_to
                            when 'pending' then y.last_offset
                            when 'dead_letter' then y.dl_last end
                       when p_status = 'completed' and y.groups > 0 then y.groups_committed
                       when p_status = 'pending' then y.last_offset
                   end as hi
              from (select u.i, p.id, p.newest_created_at as newest, p.retained_from,
                           p.last_offset, qm.partition_id is not null as has_qm, qm.committed,
                           case when qm.worker_id is not null and qm.lease_expires_at > p_now
                                then greatest(qm.batch_end, qm.committed)
                                else qm.committed end as leased_to,
                           g.n as groups, g.committed as groups_committed,
                           dl.first as dl_first, dl.last as dl_last
                      -- in the order given, so that the statement stops at the p_max-th
                      -- partition that can hold the status (the first 1000 of 10,000 partitions
                      -- in half the time of them all)
                      from (select c.id, c.i from unnest(p_ids) with ordinality as c(id, i)
                             order by c.i) u
                      join queen.log_partitions p on p.id = u.id
                      left join queen.log_consumers qm
                             on qm.partition_id = p.id and qm.consumer_group = '__QUEUE_MODE__'
                     cross join lateral (
                         select count(*) as n, min(c.committed) as committed
                           from queen.log_consumers c
                          where c.partition_id = p.id
                            and c.consumer_group <> '__QUEUE_MODE__') g
                     -- for every status: Citus refuses a lateral subquery that a constant
                     -- condition (p_status = ...) empties
                     cross join lateral (
                         select min(d.msg_offset) as first, max(d.msg_offset) as last
                           from queen.dead_letters d
                          where d.partition_id = p.id
                            and d.consumer_group = '__QUEUE_MODE__') dl) y) r
     where r.lo <= r.hi
     order by r.i
     limit p_max
$$;
