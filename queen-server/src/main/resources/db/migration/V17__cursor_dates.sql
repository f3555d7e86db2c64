-- The created_at of the message at a cursor's committed offset, and of the one at its lease's
-- batch_end (set by the pop, which reads that segment anyway, so that an ack needs no lookup; read
-- only while batch_end is set).
-- Null where unknown (cursors from before this column, a seal past removed segments): readers take
-- the partition's newest write instead, which is never earlier. The message list's `completed`
-- filter orders partitions by it: by newest write, a group far behind its pushes made the page read
-- a segment of every one of 10,000 partitions to date their completed messages. No index holds
-- them, so the cursor's updates stay HOT.
alter table queen.log_consumers add column committed_at timestamptz,
                                add column batch_end_at timestamptz;
