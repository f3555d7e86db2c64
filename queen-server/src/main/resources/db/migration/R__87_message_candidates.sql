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
