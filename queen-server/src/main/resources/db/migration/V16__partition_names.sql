-- A queue's partitions in name order, for the admin pages that list them (a consumer group's
-- cursors, a queue's partitions): a page of 1,000 of 10,000 partitions is read in order and stops
-- there, instead of joining and sorting all of them first (19 ms -> 3 ms at 10,000). Name and
-- queue never change, so the updates of pushes and pops that are HOT stay HOT.
create index log_partitions_by_name on queen.log_partitions (queue_id, name);
