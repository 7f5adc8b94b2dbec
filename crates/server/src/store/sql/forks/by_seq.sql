-- A fork's messages whose seq is in $2 (see visible_range.sql).
select m.seq, m.turn, m.role, m.content, m.parts, m.reasoning, m.tool_calls, m.tool_call_id,
   m.name, m.metadata, m.pinned, m.token_count,
   coalesce(v.view_tokens, m.view_tokens) as view_tokens,
   coalesce(v.view_state, m.view_state) as view_state, m.created_at
from {segments:$3} g
join messages m on m.session_id = g.owner and m.tenant_id = $3 and m.seq = any($2)
   and m.seq between g.first_seq and g.last_seq
left join message_views v on v.session_id = $1 and v.tenant_id = $3 and v.seq = m.seq
order by m.seq
