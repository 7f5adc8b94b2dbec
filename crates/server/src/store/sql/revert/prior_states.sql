-- The view state and view tokens messages $2 of session $1 (tenant $3, under its row
-- lock) have now, for a compaction's record: for a fork's inherited seq, its overlay's
-- or else the ancestor's row's. Read by a statement of its own and written by
-- record.sql: an insert of rows selected from distributed tables a distributed database
-- plans in parts (docs/decisions/0028-citus-distribution.md).
select coalesce(array_agg(m.seq order by m.seq), '{}') as seqs,
    coalesce(array_agg(coalesce(v.view_state, m.view_state) order by m.seq), '{}')
        as states,
    coalesce(array_agg(coalesce(v.view_tokens, m.view_tokens) order by m.seq), '{}')
        as tokens
from {segments:$3} g
join messages m on m.session_id = g.owner and m.tenant_id = $3
    and m.seq between g.first_seq and g.last_seq
left join message_views v on v.session_id = $1 and v.tenant_id = $3 and v.seq = m.seq
where m.seq = any($2::bigint[])
