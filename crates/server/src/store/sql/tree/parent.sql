-- A would-be parent in the creating tenant, key-share locked until the creation commits:
-- its id and name, whether it was finished, its ancestors (empty for a root), and
-- whether the named tool call ($3) was answered (null: no such call).
select s.id, s.external_id, s.finished_at is not null as finished,
    coalesce(l.ancestors, '{}'::bigint[]) as ancestors,
    (select t.result_seq is not null from tool_calls t
     where t.session_id = s.id and t.tenant_id = $1 and t.call_id = $3) as call_answered
from sessions s left join session_links l on l.session_id = s.id and l.tenant_id = $1
where s.tenant_id = $1 and s.external_id = $2
for key share of s
