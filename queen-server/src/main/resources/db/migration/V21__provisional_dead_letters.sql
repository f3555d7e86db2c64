-- Whether a dead letter was written by a consumer's ack under a lease: such a letter is
-- provisional while that lease's batch may go out again (a give-back, an expiry, a partial maxWait
-- sweep takes it back). One written by an operator's move or by the maxWait sweep never is: taken
-- back with a batch, an operator's move lost its message (the batch skipped the frame the move
-- deleted). Letters written before this migration keep the old rule (every one provisional); new
-- rows say what wrote them. Neither statement rewrites the table.
alter table queen.dead_letters add column leased boolean not null default true;
alter table queen.dead_letters alter column leased set default false;
