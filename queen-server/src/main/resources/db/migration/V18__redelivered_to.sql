-- The highest offset that may have been handed to more than one lease: raised where a lease ends
-- without its own ack committing its batch (it expired and the row is claimed again, it was given
-- back, a lease-less ack committed under it or completed it, a stream cycle released it short, a
-- seek, reset or the maxWaitTimeSeconds sweep ended it) and where a seek back hands committed
-- offsets out again. Every offset above it went to one lease at most, so once committed it was
-- committed by that lease's own ack: a retried ack naming it (its first answer lost with a killed
-- broker) answers success even when later leases of the partition were released meanwhile, which
-- released_by, the last of them, cannot tell. At or below it released_by alone decides, as
-- before. Null: nothing handed out twice yet.
alter table queen.log_consumers add column redelivered_to bigint;
