-- The offset range of a failed batch. A failed ack charges the retry budget and releases the
-- lease; redeliveries are capped to this range so that the budget is spent by the messages that
-- failed, never by messages appended meanwhile. Cleared once the cursor passes it.
alter table queen.log_consumers add column retry_end bigint;
