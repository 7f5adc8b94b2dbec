-- A session's children that exist, oldest first, at most $3.
select c.external_id, l.parent_tool_call_id, c.finished_at, c.created_at
from session_links l join sessions c on c.id = l.session_id
where l.parent_id = $1 and l.tenant_id = $2 and c.tenant_id = $2
order by l.session_id
limit $3
