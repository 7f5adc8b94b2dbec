-- Tool call $2 of session $1 (a session that inherits nothing), as it was appended
-- ({"id", "name", "arguments"}).
select c from tool_calls t
join messages m
    on m.session_id = t.session_id and m.tenant_id = $3 and m.seq = t.call_seq,
jsonb_array_elements(m.tool_calls) c
where t.session_id = $1 and t.tenant_id = $3 and t.call_id = $2 and c ->> 'id' = $2
