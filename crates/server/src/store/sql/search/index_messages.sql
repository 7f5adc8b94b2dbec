-- Computes the search vectors of up to $3 messages of tenant $1 that have none yet (of
-- the sessions $2 only, when given), oldest first; rows another indexer holds are
-- waited for or skipped ({skip_locked}).
with batch as (select m.session_id, m.seq from messages m
    where m.tenant_id = $1 and m.search is null
      and ($2::bigint[] is null or m.session_id = any($2))
    order by m.session_id, m.seq limit $3 for update of m{skip_locked})
update messages m
set search = ctxd_search_vector(ctxd_message_doc(m.content, m.parts, m.reasoning, m.tool_calls, m.name))
from batch b where m.tenant_id = $1 and m.session_id = b.session_id and m.seq = b.seq
