-- A dead letter found by its transactionId within its partition (a retry, a lookup by message):
-- without it, each retry read every dead letter of the partition, twice, so retrying a big dead
-- letter queue message by message took time quadratic in its size.
create index dead_letters_transaction on queen.dead_letters (partition_id, transaction_id);
