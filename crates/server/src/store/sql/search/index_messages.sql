with batch as (select m.session_id, m.seq from messages m
    join sessions s on s.id = m.session_id
    where m.search is null and ($1::bigint is null or s.tenant_id = $1)
      and ($2::bigint[] is null or m.session_id = any($2))
    order by m.session_id, m.seq limit $3 for update of m{skip_locked})
update messages m
set search = ctxd_search_vector(ctxd_message_doc(m.content, m.parts, m.reasoning, m.tool_calls, m.name))
from batch b where m.session_id = b.session_id and m.seq = b.seq
