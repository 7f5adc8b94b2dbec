-- Creates a session with its link to its parent when it has one (CreateTx::insert), as
-- sql/sessions/create_linked.sql did in one statement whose common table expressions
-- inserted both (a distributed database plans that in parts: migration 0024,
-- docs/decisions/0028-citus-distribution.md). Plain statements on the tenant: the
-- session inserted (returned whole), then its link (p_parent: the parent's id,
-- p_tool_call its tool call, p_ancestors the ancestors; all null for a root). A taken
-- id is a unique violation, as before.
create function ctxd_create_session(
    p_tenant bigint, p_external_id text, p_policy jsonb, p_metadata jsonb,
    p_parent bigint, p_tool_call text, p_ancestors bigint[])
returns setof sessions
language plpgsql as $$
declare
    created sessions;
begin
    insert into sessions (tenant_id, external_id, policy, metadata)
    values (p_tenant, p_external_id, p_policy, p_metadata)
    returning * into created;
    if p_parent is not null then
        insert into session_links (session_id, tenant_id, parent_id, parent_tool_call_id,
            ancestors)
        values (created.id, p_tenant, p_parent, p_tool_call, p_ancestors);
    end if;
    return next created;
end $$;
