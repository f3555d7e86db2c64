-- Reading messages for the admin routes.

-- The segment holding each (partition, offset) pair, for the caller to slice: one primary-key
-- probe per pair. Pairs whose message retention deleted are left out.
create or replace function queen.segments_at_v1(p_partition_ids uuid[], p_offsets bigint[])
returns table (idx integer, base_offset bigint, created_at timestamptz, blob bytea)
language sql
stable
as $$
    select (u.i - 1)::integer, s.base_offset, s.created_at, s.blob
      from unnest(p_partition_ids, p_offsets) with ordinality as u(pid, off, i)
     cross join lateral (select ls.base_offset, ls.msg_count, ls.created_at, ls.blob
                           from queen.log_segments ls
                          where ls.partition_id = u.pid and ls.base_offset <= u.off
                          order by ls.base_offset desc
                          limit 1) s
     where s.base_offset + s.msg_count > u.off
     order by u.i
$$;
