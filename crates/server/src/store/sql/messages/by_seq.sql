select seq, turn, role, content, parts, reasoning, tool_calls, tool_call_id, name,
   metadata, pinned, token_count, view_tokens, view_state, created_at
from messages where session_id = $1 and tenant_id = $3 and seq = any($2) order by seq
