-- What the rows of a pop (queen.log_pop_v1, R__30) hold.

-- The blob a pop sends for a slice starting at frame p_start of its segment. A slice past the
-- first frame follows a pop that decoded the whole push, and a broker keeps such a push decoded
-- for the pops that take the rest (pop/SegmentCache) when it holds at most p_kept bytes decoded
-- (SegmentCodec.Body.bytes: the raw body and four bytes a frame, plus 64). Such a blob, when big,
-- is not sent again for each of those pops, only a stub naming it: version byte 0 (a stored
-- blob's is 1 or 2), its length and the CRC32C it ends with, read from the TOAST pointer and the
-- blob's last chunk, never the whole value (storage external). A broker that does not hold it
-- after all (another broker decoded it, or it was evicted) reads the blob by key; one that lately
-- mostly did not hold them passes 0. Segments from before raw_bytes was recorded are always sent.
-- 8192 is SegmentSlice.STUBBED_FROM.
create or replace function queen.pop_blob(p_blob bytea, p_start integer, p_raw bigint,
                                          p_count integer, p_kept bigint)
returns bytea
language sql
immutable
parallel safe
as $$
    select case when p_start > 0 and octet_length(p_blob) >= 8192
                     and p_raw + 4 * p_count + 64 <= p_kept
                then '\x00'::bytea || int4send(octet_length(p_blob))
                     || substring(p_blob from octet_length(p_blob) - 3 for 4)
                else p_blob end
$$;

-- A claim's answer when it delivers nothing: the verdict, and when to try again if known.
create or replace function queen.pop_verdict(p_verdict text, p_retry_at timestamptz default null)
returns table (verdict text, retry_at timestamptz, base_offset bigint, start_idx integer,
               take integer, msg_count integer, created_at timestamptz, blob bytea, attempt integer,
               bytes bigint)
language sql
immutable
parallel safe
as $$
    select p_verdict, p_retry_at, null::bigint, null::integer, null::integer, null::integer,
           null::timestamptz, null::bytea, null::integer, null::bigint
$$;
