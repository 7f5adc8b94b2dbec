-- Sums over seqs $2..$3 of session $1's log as the session sees it: tokens, tokens in
-- the view (messages not taken out of it), bytes of text, and the newest turn.
select coalesce(sum(m.token_count), 0)::bigint as tokens,
   coalesce(sum(coalesce(v.view_tokens, m.view_tokens))
       filter (where coalesce(v.view_state, m.view_state) <> 4), 0)::bigint as view_tokens,
   coalesce(sum(ctxd_message_bytes(m.content, m.parts, m.reasoning, m.tool_calls,
       m.tool_call_id, m.name)), 0)::bigint as bytes,
   coalesce(max(m.turn), 0)::bigint as turn
from {segments:$4} g
join messages m on m.session_id = g.owner and m.tenant_id = $4
   and m.seq between greatest(g.first_seq, $2) and least(g.last_seq, $3)
left join message_views v on v.session_id = $1 and v.tenant_id = $4 and v.seq = m.seq
