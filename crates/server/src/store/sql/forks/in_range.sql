-- A fork's messages from $2 to $3 whose running token total stays within $4 (0: no
-- cap; the first always comes), as messages/in_range.sql reads a session's own.
select seq, turn, role, content, parts, reasoning, tool_calls, tool_call_id, name,
   metadata, pinned, token_count, view_tokens, view_state, created_at
from (select m.seq, m.turn, m.role, m.content, m.parts, m.reasoning, m.tool_calls,
          m.tool_call_id, m.name, m.metadata, m.pinned, m.token_count,
          coalesce(v.view_tokens, m.view_tokens) as view_tokens,
          coalesce(v.view_state, m.view_state) as view_state, m.created_at,
          sum(m.token_count) over (order by m.seq) as running
      from {segments:$5} g
      join messages m on m.session_id = g.owner and m.tenant_id = $5
         and m.seq between greatest(g.first_seq, $2) and least(g.last_seq, $3)
      left join message_views v
         on v.session_id = $1 and v.tenant_id = $5 and v.seq = m.seq) r
where $4 = 0 or running <= $4 or seq = $2
order by seq
