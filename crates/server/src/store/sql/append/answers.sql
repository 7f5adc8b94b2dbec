-- Answers to calls of earlier appends.
answered_calls as (
    update tool_calls t set result_seq = a.seq
    from s, unnest($17::text[], $18::bigint[]) as a(id, seq)
    where t.session_id = $1 and t.tenant_id = $61 and t.call_id = a.id
)
