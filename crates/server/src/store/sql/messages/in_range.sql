select seq, turn, role, content, parts, reasoning, tool_calls, tool_call_id, name,
   metadata, pinned, token_count, view_tokens, view_state, created_at
from (select m.*, sum(token_count) over (order by seq) as running
      from messages m
      where session_id = $1 and tenant_id = $5 and seq between $2 and $3) r
where $4 = 0 or running <= $4 or seq = $2
order by seq
