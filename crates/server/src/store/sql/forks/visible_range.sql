-- A fork's view messages from $2 to $3: each seq from the session whose rows hold it
-- (sql/forks/segments.sql), its view state the session's own (overlay) or else the
-- row's.
select m.seq, m.turn, m.role, m.content, m.parts, m.reasoning, m.tool_calls, m.tool_call_id,
   m.name, m.metadata, m.pinned, m.token_count,
   coalesce(v.view_tokens, m.view_tokens) as view_tokens,
   coalesce(v.view_state, m.view_state) as view_state, m.created_at
from {segments:$4} g
join messages m on m.session_id = g.owner and m.tenant_id = $4
   and m.seq between greatest(g.first_seq, $2) and least(g.last_seq, $3)
left join message_views v on v.session_id = $1 and v.tenant_id = $4 and v.seq = m.seq
where coalesce(v.view_state, m.view_state) <> 4
order by m.seq
