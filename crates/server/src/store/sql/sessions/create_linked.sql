-- A session, with its link to its parent when it has one ($5: the parent's id, $6 its
-- tool call, $7 the ancestors; all null for a root).
with s as (
    insert into sessions (tenant_id, external_id, policy, metadata)
    values ($1, $2, $3, $4) returning {columns}
), linked as (
    insert into session_links (session_id, tenant_id, parent_id, parent_tool_call_id,
        ancestors)
    select s.id, s.tenant_id, $5, $6, $7 from s where $5::bigint is not null
)
select * from s
