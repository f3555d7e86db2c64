-- The partitions a page of messages (R__90_messages.sql) reads.

-- The partitions matching a list's filters written to since p_from, in the page's order of their
-- newest message up to p_to: by that date, and among equal dates (one push stamps all its
-- partitions alike) by offset then id, as the page orders messages (a cut among them took
-- arbitrary ones, and a page could miss messages). A partition written after p_to is dated p_to,
-- the most its newest message in the window can be (after_to true: when it is, and its offset,
-- is known only once its segments are read): ordered by its newest write, partitions written after
-- an explicit past `to` took the places of those holding the window's newest messages. Those
-- after the one given by p_after_* only, at most p_limit (null: all). plpgsql: Citus plans no
-- parameterized statement of an SQL function.
drop function if exists queen.messages_candidates_v1(text, text, text, timestamptz, timestamptz,
                                                     bigint, uuid, integer);

create or replace function queen.messages_candidates_v1(
    p_queue text, p_namespace text, p_task text, p_from timestamptz, p_to timestamptz,
    p_after_newest timestamptz, p_after_offset bigint, p_after_id uuid, p_limit integer)
returns table (id uuid, newest timestamptz, last_offset bigint, after_to boolean)
language plpgsql
stable
as $$
begin
    return query
    select p.id, least(p.newest_created_at, p_to), p.last_offset, p.newest_created_at > p_to
      from queen.log_partitions p
      join queen.queues q on q.id = p.queue_id
     where (p_queue is null or q.name = p_queue)
       and (p_namespace is null or q.namespace = p_namespace)
       and (p_task is null or q.task = p_task)
       and p.newest_created_at >= p_from
       and (p_after_newest is null
            or least(p.newest_created_at, p_to) < p_after_newest
            or least(p.newest_created_at, p_to) = p_after_newest
               and (p.last_offset < p_after_offset
                    or p.last_offset = p_after_offset and p.id > p_after_id))
     order by least(p.newest_created_at, p_to) desc, p.last_offset desc, p.id
     limit p_limit;
end;
$$;

-- The first candidates of a page, as arrays in candidate order, with how many of them were written
-- after p_to. With a status filter (p_need null), p_take of them (null: all). Unfiltered, a
-- partition written after p_to may hold any of the window's newest messages: every such partition
-- is taken, with the p_need newest of the others (those sort after them); taken again when some
-- were, as many more as there were, or all of them when every one taken was such.
create or replace function queen.messages_first_candidates_v1(
    p_queue text, p_namespace text, p_task text, p_from timestamptz, p_to timestamptz,
    p_take integer, p_need integer,
    out candidate_ids uuid[], out candidate_newest timestamptz[], out candidate_offsets bigint[],
    out written_after_to integer)
language plpgsql
stable
as $$
declare
    v_take integer := p_take;
begin
    loop
        select coalesce(array_agg(c.id order by c.n), '{}'),
               coalesce(array_agg(c.newest order by c.n), '{}'),
               coalesce(array_agg(c.last_offset order by c.n), '{}'),
               count(*) filter (where c.after_to)
          into candidate_ids, candidate_newest, candidate_offsets, written_after_to
          from queen.messages_candidates_v1(p_queue, p_namespace, p_task, p_from, p_to, null, null,
                                            null, v_take)
               with ordinality as c(id, newest, last_offset, after_to, n);
        exit when p_need is null or written_after_to = 0 or v_take is null
                  or cardinality(candidate_ids) < v_take
                  or cardinality(candidate_ids) - written_after_to >= p_need;
        v_take := case when written_after_to < cardinality(candidate_ids)
                       then p_need + written_after_to end;
    end loop;
end;
$$;

-- The partitions a page of completed messages reads, at most 1000, with the offsets that hold
-- them (retained_from through the queue-mode cursor, or through the slowest group's cursor where
-- groups alone read the partition) and the created_at of their newest one up to p_to, in the
-- page's order of that message (date, offset, id). The date is that cursor's committed_at (V17),
-- the partition's newest write where unknown: by newest write, a group far behind its pushes left
-- every partition a candidate, and a page of 10,000 partitions read a segment of each to date
-- their completed messages. p_ids, when given, are the only partitions considered.
create or replace function queen.messages_completed_candidates_v1(
    p_queue text, p_namespace text, p_task text, p_ids uuid[], p_from timestamptz,
    p_to timestamptz,
    out ids uuid[], out lo bigint[], out hi bigint[], out newest timestamptz[])
language plpgsql
stable
-- per call: a generic plan guessed 20 partitions and probed their cursors singly (20 ms, not 10)
set plan_cache_mode = force_custom_plan
as $$
declare
    v_queues uuid[];
begin
    -- the matching queues first, a filter on the partitions: joined, the planner probed the cursors
    -- of every partition before it (34 ms for a queue of 5 partitions next to one of 10,000)
    v_queues := array(select q.id from queen.queues q
                       where (p_queue is null or q.name = p_queue)
                         and (p_namespace is null or q.namespace = p_namespace)
                         and (p_task is null or q.task = p_task));
    select coalesce(array_agg(x.id order by x.newest desc, x.hi desc, x.id), '{}'),
           coalesce(array_agg(x.lo order by x.newest desc, x.hi desc, x.id), '{}'),
           coalesce(array_agg(x.hi order by x.newest desc, x.hi desc, x.id), '{}'),
           coalesce(array_agg(x.newest order by x.newest desc, x.hi desc, x.id), '{}')
      into ids, lo, hi, newest
      from (select y.*
              -- each partition's deciding cursor, picked from one join: the queue-mode cursor, else
              -- the slowest group's (a known date first among equal offsets). Aggregating every
              -- partition's cursors, or probing them one partition at a time, took twice as long
              -- for 10,000 partitions
              from (select distinct on (p.id) p.id, p.retained_from as lo, c.committed as hi,
                           least(coalesce(c.committed_at, p.newest_created_at), p_to) as newest
                      from queen.log_partitions p
                      join queen.log_consumers c on c.partition_id = p.id
                     where (p_ids is null or p.id = any (p_ids))
                       and p.queue_id = any (v_queues)
                       and p.newest_created_at >= p_from
                     order by p.id, c.consumer_group <> '__QUEUE_MODE__', c.committed,
                              c.committed_at nulls last) y
             where y.lo <= y.hi and y.newest >= p_from
             order by y.newest desc, y.hi desc, y.id
             limit 1000) x;
end;
$$;
