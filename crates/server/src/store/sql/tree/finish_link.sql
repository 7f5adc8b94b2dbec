-- A finishing child's link: its parent's id, the parent's name while it exists, and the
-- tool call the child answers ($1 the child, $2 its tenant).
select l.parent_id, p.external_id, l.parent_tool_call_id
from session_links l left join sessions p on p.id = l.parent_id and p.tenant_id = $2
where l.session_id = $1 and l.tenant_id = $2
