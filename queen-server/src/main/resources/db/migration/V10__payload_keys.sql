-- The keys that have sealed payloads, by key id (a hash of the key, never the key): a broker
-- that lacks one of them refuses to start instead of failing, after the fact, on every pop of a
-- payload it cannot open (an autoAck pop would already have moved the cursor past it).
create table queen.payload_keys (
    key_id        integer primary key,
    registered_at timestamptz not null default now()
);
