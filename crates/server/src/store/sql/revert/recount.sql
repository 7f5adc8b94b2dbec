-- A session's view aggregates recounted from its rows: the tokens of the messages in
-- the view (from view_first_seq, not taken out by a step summary; for a fork each seq
-- read from the session whose rows hold it, with the fork's overlay over it), each
-- active summary's tokens (a fork's own and those it reuses by link; the block they
-- make is counted by the caller), and the last seq the active summaries before the
-- view cover (0: none).
with active as (
   select su.first_seq, su.last_seq, su.token_count from summaries su, sessions s
   where s.id = $1 and s.tenant_id = $2 and su.session_id = s.id and su.tenant_id = $2
     and su.parent_id is null
     and su.reverted_at is null
   union all
   select su.first_seq, su.last_seq, su.token_count
   from summary_links k
   join summaries su on su.id = k.summary_id and su.tenant_id = $2
   where k.session_id = $1 and k.tenant_id = $2 and k.parent_id is null
)
select
   (select coalesce(sum(coalesce(v.view_tokens, m.view_tokens)), 0)::bigint
    from {segments:$2} g
    join messages m on m.session_id = g.owner and m.tenant_id = $2
       and m.seq between greatest(g.first_seq, s.view_first_seq) and g.last_seq
    left join message_views v on v.session_id = s.id and v.tenant_id = $2 and v.seq = m.seq
    where coalesce(v.view_state, m.view_state) <> 4),
   (select coalesce(array_agg(a.token_count::bigint), '{}') from active a),
   (select coalesce(max(a.last_seq), 0) from active a where a.first_seq < s.view_first_seq)
from sessions s where s.id = $1 and s.tenant_id = $2
