-- Storage that stays bounded: a retention watermark per partition, a compact transactionId index,
-- cursor rows that update HOT, segments without a derived column.

-- The retention watermark: every offset below it has been deleted by retention. Lookups in the
-- transactionId index ignore entries below it, and forward walks start from it, never at offset 0.
alter table queen.log_partitions add column retained_from bigint not null default 0;

-- The transactionId index, in pages: each row covers the 64-bit hashes [lo, next page's lo) of one
-- partition and holds (hash, offset) pairs, interleaved, newest first. About 16 bytes per message
-- where a row per message costs over 100. A push prepends its pairs to the page each hash falls in
-- (WAL logs only the changed prefix, the update is HOT); a page past 64 pairs splits by hash. Pairs
-- below the partition's retained_from are dead: ignored by lookups, dropped when the page is next
-- rewritten. Hashes are queen.txn_hash (hashtextextended(transaction id, 0)); a hash match is a
-- candidate that the broker confirms against the stored frame.
create table queen.log_txn_index (
    partition_id uuid not null references queen.log_partitions (id) on delete cascade,
    lo           bigint not null,
    entries      bigint[] not null,
    primary key (partition_id, lo)
) with (fillfactor = 70);

-- Carry the existing index over: pages of about 32 pairs by hash, equal hashes kept together.
insert into queen.log_txn_index (partition_id, lo, entries)
select k.partition_id,
       case when k.piece = 0 then -9223372036854775808 else min(k.h) end,
       array_agg(v.x order by k.msg_offset desc, v.n)
  from (select r.partition_id, r.h, r.msg_offset,
               (min(r.rn) over (partition by r.partition_id, r.h) - 1) / 32 as piece
          from (select t.partition_id, hashtextextended(t.transaction_id, 0) as h, t.msg_offset,
                       row_number() over (partition by t.partition_id
                                          order by hashtextextended(t.transaction_id, 0)) as rn
                  from queen.log_txn_ids t) r) k
 cross join lateral (values (1, k.h), (2, k.msg_offset)) as v(n, x)
 group by k.partition_id, k.piece;

drop table queen.log_txn_ids;

-- Every lease and every ack changed this index's column, so no cursor update could be HOT and each
-- left a dead tuple and dead index entries behind. Leases are found by worker id through the
-- broker's ack registry (the lease's partitions), or by a scan of the compact table.
drop index queen.log_consumers_worker;

-- Room for HOT under contention: pruning a page needs every other backend off it, so on a page
-- shared by many busy rows it rarely happens; an update that then finds no room leaves the page,
-- and without VACUUM the table grows. With 30% fill, 16 clients updating 100 rows 64,000 times
-- kept the table at 32 kB (at 50%, 208 kB and growing). Affects pages filled from now on.
alter table queen.log_consumers set (fillfactor = 30);
alter table queen.log_partitions set (fillfactor = 30);


-- end_offset is base_offset + msg_count - 1: 8 bytes a segment for nothing. Dropping the column
-- drops the check that used it.
alter table queen.log_segments drop column end_offset;
alter table queen.log_segments add constraint log_segments_msg_count check (msg_count > 0);

-- Dead letters expire with their queue's retention, by age of the dead letter.
create index dead_letters_partition_failed on queen.dead_letters (partition_id, failed_at);
