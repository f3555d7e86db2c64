-- Whether a dead letter was written by a consumer's ack under a lease: such a letter is
-- provisional while that lease's batch may go out again (a give-back, an expiry, a partial maxWait
-- sweep takes it back). One written by an operator's move or by the maxWait sweep never is: taken
-- back with a batch, an operator's move lost its message (the batch skipped the frame the move
-- deleted). The broker names the kind of every letter it writes; the default, true, is the rule
-- before this column, for letters stored before it and for brokers of earlier releases still
-- running beside this one. Adding a column with a constant default rewrites nothing.
alter table queen.dead_letters add column leased boolean not null default true;
