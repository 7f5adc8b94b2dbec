-- Messages $2..$3 of session $1 a step summary had taken out of the view: seq, tokens,
-- and the tokens they had in the view.
select m.seq, m.token_count::bigint, coalesce(v.view_tokens, m.view_tokens)::bigint
from {segments:$4} g
join messages m on m.session_id = g.owner and m.tenant_id = $4
   and m.seq between greatest(g.first_seq, $2) and least(g.last_seq, $3)
left join message_views v on v.session_id = $1 and v.tenant_id = $4 and v.seq = m.seq
where coalesce(v.view_state, m.view_state) = 4
order by m.seq
