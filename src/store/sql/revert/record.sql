-- A compaction's record, written in its transaction before its view change: the view
-- state and view tokens its messages have now (under the session's row lock).
insert into compactions (session_id, event_seq, compaction, view_epoch_before,
    view_first_seq_before, view_tokens_delta, summary_tokens_delta, seqs, prior_states,
    prior_tokens, summary_ids, first_seq, last_seq)
select $1, $2, $3, $4, $5, $6, $7,
    coalesce(array_agg(m.seq order by m.seq), '{}'),
    coalesce(array_agg(m.view_state order by m.seq), '{}'),
    coalesce(array_agg(m.view_tokens order by m.seq), '{}'),
    $9, $10, $11
from messages m
where m.session_id = $1 and m.seq = any($8::bigint[])
