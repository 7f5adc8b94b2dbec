-- Tool call $2 of fork $1, as it was appended: the call may be one it inherited, made in
-- an ancestor's rows.
with c as (
    (select t.call_seq from tool_calls t
     where t.session_id = $1 and t.tenant_id = $3 and t.call_id = $2)
    union all
    (select t.call_seq from session_lineage l
     join tool_calls t on t.session_id = l.ancestor_id and t.tenant_id = $3
         and t.call_id = $2
     where l.session_id = $1 and l.tenant_id = $3 and t.call_seq <= l.last_seq
     order by l.depth)
    limit 1
)
select x from c
join {segments:$3} g on c.call_seq between g.first_seq and g.last_seq
join messages m on m.session_id = g.owner and m.tenant_id = $3 and m.seq = c.call_seq,
jsonb_array_elements(m.tool_calls) x
where x ->> 'id' = $2
