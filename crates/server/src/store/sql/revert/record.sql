-- A compaction's record, written in its transaction before its view change: the view
-- state and view tokens its messages have now for session $1 (under its row lock): for
-- a fork's inherited seq, its overlay's or else the ancestor's row's.
insert into compactions (session_id, event_seq, compaction, view_epoch_before,
    view_first_seq_before, view_tokens_delta, summary_tokens_delta, seqs, prior_states,
    prior_tokens, summary_ids, first_seq, last_seq, tenant_id)
select $1, $2, $3, $4, $5, $6, $7,
    coalesce(array_agg(m.seq order by m.seq), '{}'),
    coalesce(array_agg(coalesce(v.view_state, m.view_state) order by m.seq), '{}'),
    coalesce(array_agg(coalesce(v.view_tokens, m.view_tokens) order by m.seq), '{}'),
    $9, $10, $11, $12
from {segments:$12} g
join messages m on m.session_id = g.owner and m.tenant_id = $12 and m.seq between g.first_seq and g.last_seq
left join message_views v on v.session_id = $1 and v.tenant_id = $12 and v.seq = m.seq
where m.seq = any($8::bigint[])
