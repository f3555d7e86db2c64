-- A segment's decoded size in bytes, for the pop's byte budget (QUEEN_POP_MAX_BYTES): a pop reads
-- it instead of the blob. Null for segments written before; their stored size stands in.
-- Adding a nullable column rewrites nothing.
alter table queen.log_segments add column raw_bytes integer;
