-- The lease whose ack released a cursor last, and the offset it had committed then. A retried ack
-- whose first answer was lost (its broker killed after the commit) finds its lease gone; it may
-- answer success only for what that very lease committed. Without this a late ack from an expired
-- lease was told success for a message that another consumer's lease had processed: two
-- successes for one message.
alter table queen.log_consumers add column released_by uuid, add column released_to bigint;
