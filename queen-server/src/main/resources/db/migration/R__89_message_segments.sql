-- A message's segment and where it stands for each group: the message detail route, and the
-- transaction ids of a listed page (R__90_messages.sql).

-- The segment holding each (partition, offset) pair, for the caller to slice: one primary-key
-- probe per pair. Pairs whose message retention deleted are left out. Without p_bytes the blob is
-- null: a caller naming many messages of one segment learns its first offset and then reads it
-- once (with that offset as the pair's).
create or replace function queen.segments_at_v2(p_partition_ids uuid[], p_offsets bigint[],
                                                p_bytes boolean)
returns table (idx integer, base_offset bigint, created_at timestamptz, blob bytea)
language plpgsql
stable
as $$
#variable_conflict use_column
declare
    v_grp uuid[];
begin
    -- one shard per statement: on Citus each goes to the shard's worker alone
    if queen.distributed() then
        -- Citus routes each statement by the values of its shard's partition ids, which a generic
        -- plan does not know
        perform set_config('plan_cache_mode', 'force_custom_plan', true);
    end if;
    for v_grp in select * from queen.shard_groups(p_partition_ids) loop
        return query
        select (t.i - 1)::integer, s.base_offset, s.created_at, case when p_bytes then s.blob end
          from unnest(p_partition_ids, p_offsets) with ordinality as t(pid, off, i)
         cross join lateral (select ls.base_offset, ls.msg_count, ls.created_at, ls.blob
                               from queen.log_segments ls
                              where ls.partition_id = t.pid
                                and (v_grp is null or ls.partition_id = any (v_grp))
                                and ls.base_offset <= t.off
                              order by ls.base_offset desc
                              limit 1) s
         where (v_grp is null or t.pid = any (v_grp))
           and s.base_offset + s.msg_count > t.off;
    end loop;
end;
$$;

-- segments_at_v2 with the bytes: the brokers of releases before v2 call it during a rolling upgrade.
create or replace function queen.segments_at_v1(p_partition_ids uuid[], p_offsets bigint[])
returns table (idx integer, base_offset bigint, created_at timestamptz, blob bytea)
language sql
stable
as $$
    select * from queen.segments_at_v2(p_partition_ids, p_offsets, true);
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
           c.committed >= p_offset or d.msg_offset is not null or k.acked,
           d.msg_offset is null and c.committed < p_offset and c.batch_end >= p_offset
               and k.live and not k.acked,
           -- not a message the group acked inside a live lease (past the cursor or not)
           case when c.committed < p_offset and c.batch_end >= p_offset and k.live and not k.acked
                then c.lease_expires_at end,
           d.msg_offset is not null, d.error_message,
           coalesce(d.retry_count, case when c.attempt_offset = p_offset
                                        then greatest(c.attempt_count - 1, 0) else 0 end)
      from queen.log_consumers c
      -- acked inside the lease while it lives; a lease that ends unreleased gives them back
      cross join lateral (
             select c.worker_id is not null and c.lease_expires_at > now() as live,
                    c.worker_id is not null and c.lease_expires_at > now()
                        and p_offset = any (coalesce(c.acked_offsets, '{}')) as acked) k
      left join queen.dead_letters d
             on d.partition_id = c.partition_id and d.consumer_group = c.consumer_group
            and d.msg_offset = p_offset
     where c.partition_id = p_partition_id
     order by c.consumer_group = '__QUEUE_MODE__' desc, c.consumer_group;
end;
$$;
