-- A session's view aggregates recounted from its rows: the tokens of the messages in
-- the view (from view_first_seq, not taken out by a step summary), of the active
-- summaries with their framing ($2 tokens each), and the last seq the active summaries
-- before the view cover (0: none).
select
   (select coalesce(sum(m.view_tokens), 0)::bigint from messages m
    where m.session_id = s.id and m.seq >= s.view_first_seq and m.view_state <> 4),
   (select coalesce(sum(su.token_count + $2), 0)::bigint from summaries su
    where su.session_id = s.id and su.parent_id is null and su.reverted_at is null),
   (select coalesce(max(su.last_seq), 0) from summaries su
    where su.session_id = s.id and su.parent_id is null and su.reverted_at is null
      and su.first_seq < s.view_first_seq)
from sessions s where s.id = $1
