-- The pop's byte budget (QUEEN_POP_MAX_BYTES): how log_pop_v1 sizes what it takes. A pop takes
-- messages up to and including the one that crosses the budget, so a message bigger than the
-- budget still goes out, and a slice cut short leaves nothing of it: slices stay contiguous.

-- the shape before each push read counted at least its stored size
drop function if exists queen.pop_charge(integer, integer, bigint);

-- The decoded size of a segment written before log_segments.raw_bytes (V20), from p_head, the
-- first bytes of its blob: version, body encoding, then two unsigned LEB128 varints, the frame
-- count and the raw body length (the same in codec versions 1 and 2). Besides the checksum a
-- stub carries (queen.pop_blob), the only bytes of a blob PostgreSQL reads, and only for such
-- segments: counted at their compressed size they could still claim more than the heap holds.
-- p_stored stands in for a header cut short.
create or replace function queen.segment_raw_length(p_head bytea, p_stored bigint)
returns bigint
language plpgsql
immutable
parallel safe
as $$
declare
    v_pos   integer := 2;
    v_value bigint;
    v_shift integer;
    v_byte  integer;
begin
    for v_field in 1 .. 2 loop
        v_value := 0;
        v_shift := 0;
        loop
            if v_pos >= length(p_head) or v_shift > 28 then
                return p_stored;
            end if;
            v_byte := get_byte(p_head, v_pos);
            v_pos := v_pos + 1;
            v_value := v_value | ((v_byte & 127)::bigint << v_shift);
            exit when v_byte < 128;
            v_shift := v_shift + 7;
        end loop;
    end loop;
    return v_value;
end;
$$;

-- How many of a segment's p_want messages a pop with p_left bytes of its budget left takes, each
-- counted at the segment's average decoded size (PostgreSQL never decodes a blob): up to and
-- including the one that crosses the budget, so a message bigger than the whole budget is still
-- delivered. A null budget takes them all.
create or replace function queen.pop_fit(p_want integer, p_count integer, p_bytes bigint,
                                         p_left bigint)
returns integer
language sql
immutable
parallel safe
as $$
    select case when p_left is null or p_bytes <= 0 or p_left >= p_bytes then p_want
                when p_left <= 0 then 0
                else least(p_want::bigint, (p_left * p_count + p_bytes - 1) / p_bytes)::integer
           end
$$;

-- The bytes charged for p_take of a segment's p_count messages: its decoded size prorated, rounded
-- up, and at least its stored size, since the broker may hold the whole blob (a pop of one
-- message from each of many big pushes holds every one of them, sent or read after a stub).
create or replace function queen.pop_charge(p_take integer, p_count integer, p_bytes bigint,
                                            p_stored bigint)
returns bigint
language sql
immutable
parallel safe
as $$
    select greatest((p_bytes * p_take + p_count - 1) / p_count, p_stored)
$$;
