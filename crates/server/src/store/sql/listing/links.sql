-- The links of the listed sessions: [child id, parent name or null, tool call, depth].
select l.session_id, p.external_id, l.parent_tool_call_id,
    cardinality(l.ancestors)::bigint
from session_links l
left join sessions p on p.id = l.parent_id and p.tenant_id = $2 and p.deleted_at is null
where l.session_id = any($1) and l.tenant_id = $2
