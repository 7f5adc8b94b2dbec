-- A finishing child's link: its parent's id, the parent's name while it exists, and the
-- tool call the child answers.
select l.parent_id, p.external_id, l.parent_tool_call_id
from session_links l left join sessions p on p.id = l.parent_id
where l.session_id = $1
