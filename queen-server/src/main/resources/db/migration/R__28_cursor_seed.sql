-- Where a consumer group's cursor starts on a partition it meets for the first time.

-- The cursor that starts a partition at a timestamp: just before the first segment created at
-- or after it, or last_offset (future only) when nothing is that recent. created_at is monotone in
-- base_offset, so a binary search over base_offset finds it with O(log n) primary-key probes
-- instead of walking every older segment (a scan by created_at would need another index on the
-- hot insert path).
create or replace function queen.log_seek_v1(p_partition_id uuid, p_ts timestamptz, p_last bigint)
returns bigint
language plpgsql
stable
as $$
#variable_conflict use_column
declare
    v_lo  bigint;
    v_hi  bigint;
    v_mid bigint;
    v_at  timestamptz;
    v_base bigint;
    v_from bigint;
begin
    select p.newest_created_at, p.retained_from into v_at, v_from
      from queen.log_partitions p where p.id = p_partition_id;
    if v_at is null or v_at < p_ts then
        return p_last;
    end if;
    -- from the retention watermark: never a walk over the deleted head
    select s.base_offset into v_lo from queen.log_segments s
     where s.partition_id = p_partition_id and s.base_offset >= v_from
     order by s.base_offset limit 1;
    if v_lo is null then
        return p_last;
    end if;
    v_hi := p_last;
    -- invariant: the answer's segment starts in [v_lo, v_hi]
    while v_lo < v_hi loop
        v_mid := v_lo + (v_hi - v_lo) / 2;
        select s.base_offset, s.created_at into v_base, v_at from queen.log_segments s
         where s.partition_id = p_partition_id and s.base_offset <= v_mid
         order by s.base_offset desc limit 1;
        if v_at >= p_ts then
            v_hi := v_base;
        else
            select s.base_offset into v_base from queen.log_segments s
             where s.partition_id = p_partition_id and s.base_offset > v_mid
             order by s.base_offset limit 1;
            exit when v_base is null;
            v_lo := v_base;
        end if;
    end loop;
    select s.base_offset, s.created_at into v_base, v_at from queen.log_segments s
     where s.partition_id = p_partition_id and s.base_offset = v_lo;
    if v_at is null or v_at < p_ts then
        return p_last;
    end if;
    return v_base - 1;
end;
$$;

-- Seeds the cursor of a (partition, group) seen for the first time; an existing cursor is never
-- re-seeded. Preference: the group's durable subscription record, then the pop-carried intent,
-- then everything retained. __QUEUE_MODE__ skips the first two: a queue-mode pop carrying
-- subscriptionMode=new must never skip backlog; its record (mode all) is still written, as the
-- bulk seed writes it, so that retention holds the partitions queue mode has not read yet. The
-- intent is p_sub_mode 'new' (subscriptionMode new or subscriptionFrom=now) or a p_sub_from
-- timestamp. Returns null when another transaction is creating the group's record: the caller
-- skips the partition for this cycle instead of waiting.
create or replace function queen.log_seed_cursor_v1(
    p_partition_id uuid, p_queue_id uuid, p_group text, p_last bigint,
    p_sub_mode text, p_sub_from timestamptz, p_now timestamptz)
returns bigint
language plpgsql
as $$
#variable_conflict use_column
declare
    v_mode text;
    v_ts   timestamptz;
    v_seek bigint;
begin
    if p_group = '__QUEUE_MODE__' then
        perform 1 from queen.consumer_groups_metadata m
         where m.queue_id = p_queue_id and m.consumer_group = p_group;
        -- a pop that finds the lock taken goes on: its holder is writing this very record, and a
        -- fresh queue's first pops on its many partitions must not skip each other
        if not found
           and pg_try_advisory_xact_lock(hashtextextended(p_queue_id::text || '/' || p_group, 43)) then
            insert into queen.consumer_groups_metadata (queue_id, consumer_group, subscription_mode, subscription_timestamp)
            values (p_queue_id, p_group, 'all', null)
            on conflict (queue_id, consumer_group) do nothing;
        end if;
        return -1;
    end if;

    select m.subscription_mode, m.subscription_timestamp into v_mode, v_ts
      from queen.consumer_groups_metadata m
     where m.queue_id = p_queue_id and m.consumer_group = p_group;
    if not found then
        -- Record the pop-carried intent durably, so later pops without it continue from there and
        -- partitions created later deliver their whole backlog. Try, never wait (see log_pop_v1).
        if not pg_try_advisory_xact_lock(hashtextextended(p_queue_id::text || '/' || p_group, 43)) then
            return null;
        end if;
        -- mode new carries the time its pop arrived (brokers before it sent none: then now), by
        -- the broker's clock: never later than the database's now, so that one running ahead
        -- skips nothing written before its pop
        if p_sub_from is not null then
            v_mode := case when p_sub_mode = 'new' then 'new' else 'timestamp' end;
            v_ts := case when p_sub_mode = 'new' then least(p_sub_from, p_now) else p_sub_from end;
        elsif p_sub_mode = 'new' then
            v_mode := 'new';
            v_ts := p_now;
        else
            v_mode := 'all';
            v_ts := null;
        end if;
        insert into queen.consumer_groups_metadata (queue_id, consumer_group, subscription_mode, subscription_timestamp)
        values (p_queue_id, p_group, v_mode, v_ts)
        on conflict (queue_id, consumer_group) do nothing;
        -- a record committed by someone else meanwhile wins
        select m.subscription_mode, m.subscription_timestamp into v_mode, v_ts
          from queen.consumer_groups_metadata m
         where m.queue_id = p_queue_id and m.consumer_group = p_group;
    end if;

    if v_ts is null then
        return -1;
    end if;
    return queen.log_seek_v1(p_partition_id, v_ts, p_last);
end;
$$;
