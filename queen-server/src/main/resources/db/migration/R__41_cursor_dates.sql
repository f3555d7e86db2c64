-- The dates of cursors (V17): each cursor's committed_at is the created_at of its committed message.

-- The created_at of the message at an offset, for a cursor's committed_at (V17): the segment
-- holding it, or null when retention removed it (a segment below it would date it too early, and
-- the message list would then miss completed messages).
create or replace function queen.log_offset_created_at_v1(p_partition uuid, p_offset bigint)
returns timestamptz
language plpgsql
stable
as $$
declare
    v_at timestamptz;
begin
    select s.created_at into v_at
      from queen.log_segments s
     where s.partition_id = p_partition and s.base_offset <= p_offset
       and s.base_offset + s.msg_count > p_offset
     order by s.base_offset desc
     limit 1;
    return v_at;
end;
$$;

-- The created_at of the message at p_offset of a cursor's partition: from the dates its row holds
-- where they fit (its committed message, its lease's last one, which the pop stored so that an
-- ack needs no lookup), else looked up.
create or replace function queen.log_cursor_offset_at_v1(p_cursor queen.log_consumers,
                                                         p_offset bigint)
returns timestamptz
language plpgsql
stable
as $$
begin
    return case when p_offset = p_cursor.committed then p_cursor.committed_at
                when p_offset = p_cursor.batch_end then p_cursor.batch_end_at
                else queen.log_offset_created_at_v1(p_cursor.partition_id, p_offset) end;
end;
$$;

-- Dates the cursors that have no committed_at though their committed message is still stored:
-- moved last before the column existed, or placed at first contact. Until then the message list
-- takes their partition's newest write as the date of their newest completed message, which is
-- never too early but puts them first in every page of completed messages; a group that stopped
-- consuming would never move them again. Run by the retention cycle (ops/Retention): looks at up
-- to p_max such cursors after the key (p_after_partition, p_after_group), in key order, and
-- returns how many it looked at and the last key. It never waits for a cursor's lock: acks lock a
-- partition's cursors in their own order (one merged ack statement takes group b's before a's),
-- and one transaction holding cursors in key order would deadlock with them; a cursor in use is
-- left to its own ack or the next cycle. One statement per cursor, each on the row as it was
-- read: an ack or seek since then dated it itself.
drop function if exists queen.log_cursors_date_v1(integer);

create or replace function queen.log_cursors_date_v1(
    p_after_partition uuid, p_after_group text, p_max integer,
    out examined integer, out last_partition uuid, out last_group text)
language plpgsql
as $$
declare
    c    record;
    v_at timestamptz;
begin
    examined := 0;
    for c in
        select lc.partition_id, lc.consumer_group, lc.committed
          from queen.log_consumers lc
          join queen.log_partitions p on p.id = lc.partition_id
         where lc.committed_at is null and lc.committed >= p.retained_from
           and (p_after_partition is null
                or (lc.partition_id, lc.consumer_group) > (p_after_partition, p_after_group))
         order by lc.partition_id, lc.consumer_group
         limit p_max
    loop
        examined := examined + 1;
        last_partition := c.partition_id;
        last_group := c.consumer_group;
        v_at := queen.log_offset_created_at_v1(c.partition_id, c.committed);
        continue when v_at is null;
        perform 1 from queen.log_consumers lc
         where lc.partition_id = c.partition_id and lc.consumer_group = c.consumer_group
           for no key update skip locked;
        continue when not found;
        update queen.log_consumers lc set committed_at = v_at
         where lc.partition_id = c.partition_id and lc.consumer_group = c.consumer_group
           and lc.committed = c.committed and lc.committed_at is null;
    end loop;
end;
$$;
