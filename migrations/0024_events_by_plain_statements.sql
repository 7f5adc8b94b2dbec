-- Writes the events a session's transaction queued (store::events, SessionTx::finish),
-- as sql/events/write.sql did in one statement whose common table expression inserted
-- them. A distributed database plans such a statement in parts and commits it in two
-- phases even on one node, and an insert of rows selected from an array likewise
-- (docs/decisions/0028-citus-distribution.md, measured). Here each statement is a plain
-- one on the session's tenant — the row's update, then the events inserted one by one —
-- so on a database distributed by tenant all of it runs on the node holding the tenant
-- and commits in one phase; on one PostgreSQL it is still one round trip. The events
-- are announced on p_channel (the id of the last) from the calling connection.
-- Returns that id, or null when no such session is locked here.
create function ctxd_write_events(
    p_session bigint, p_tenant bigint, p_kinds smallint[], p_details jsonb[],
    p_budget smallint, p_channel text)
returns bigint
language plpgsql as $$
declare
    s record;
    i int;
    last_id bigint;
begin
    update sessions set event_seq = event_seq + cardinality(p_kinds),
        budget_status = coalesce(p_budget, budget_status)
    where id = p_session and tenant_id = p_tenant
    returning external_id, event_seq - cardinality(p_kinds) as base, version into s;
    if not found then
        return null;
    end if;
    for i in 1 .. cardinality(p_kinds) loop
        insert into events (tenant_id, session_id, external_id, session_seq, kind,
            session_version, detail)
        values (p_tenant, p_session, s.external_id, s.base + i, p_kinds[i], s.version,
            p_details[i])
        returning id into last_id;
    end loop;
    perform pg_notify(p_channel, last_id::text);
    return last_id;
end $$;
